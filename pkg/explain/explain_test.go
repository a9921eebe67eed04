package explain

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/scope"
)

func newTest(t *testing.T, p profile.Profile) (*Explainer, *recentdb.DB) {
	e, db, _ := newTestFrontier(t, p)
	return e, db
}

func newTestFrontier(t *testing.T, p profile.Profile) (*Explainer, *recentdb.DB, *frontier.Frontier) {
	t.Helper()
	rdb := embeddedtest.Redis(t)
	f, err := frontier.New(rdb, "fc-npld", frontier.OptionsFrom(p))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(context.Background(), Config{Profile: p, Redis: rdb, Frontier: f, Crawl: "fc", Stream: "npld",
		BaseDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	db, err := recentdb.New(rdb, recentdb.Options{Crawl: "fc", Stream: "npld"})
	if err != nil {
		t.Fatal(err)
	}
	return e, db, f
}

func TestExplainBadURL(t *testing.T) {
	e, _ := newTest(t, profile.Default())
	for _, u := range []string{"", "ftp://x/", "mailto:a@b", "http://"} {
		if _, err := e.Explain(context.Background(), Request{URL: u}); !errors.Is(err, ErrBadURL) {
			t.Errorf("%q: %v, want ErrBadURL", u, err)
		}
	}
}

// A URL crawled an hour ago is held back by a one-day recrawl interval
// until a day after its capture; with no capture it is admitted.
func TestExplainRecrawl(t *testing.T) {
	p := profile.Default()
	p.Frontier.RecrawlIntervalSeconds = 86400
	e, db := newTest(t, p)
	ctx := context.Background()
	rep, err := e.Explain(ctx, Request{URL: "http://a.example/x"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Recrawl.HeldBack || rep.Recent != nil || rep.Frontier.Known || rep.SURT != "http://(example,a,)/x" {
		t.Fatalf("never crawled: %+v", rep)
	}
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	if err := db.Put(ctx, []recentdb.Update{{URL: "http://a.example/x", Capture: &recentdb.Capture{Time: at, Status: 200,
		Digest: "sha1:AAAA", Filename: "f.warc.gz", Length: -1}}}); err != nil {
		t.Fatal(err)
	}
	rep, err = e.Explain(ctx, Request{URL: "http://a.example/x"})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Recrawl.HeldBack || rep.Recrawl.DueAt == nil || !rep.Recrawl.DueAt.Equal(at.Add(24*time.Hour)) ||
		rep.Recent == nil || rep.Recent.LastCapture.Status != 200 || rep.Scope.Accepted {
		t.Fatalf("crawled an hour ago (no seeds: out of scope): %+v %+v", rep.Recrawl, rep.Scope)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil || !strings.Contains(b.String(), "recrawl") {
		t.Fatalf("text: %v\n%s", err, b.String())
	}
}

func TestParseCDX(t *testing.T) {
	caps, err := parseCDX([]byte("20200101000000 http://a/ text/html 200 ABC 10 20 f.warc.gz\nshort line\n20190101000000 http://a/ - - - 1 2 g.warc.gz\n"))
	if err != nil || len(caps) != 2 || caps[0].Offset != 20 || caps[1].Status != "" || caps[1].Filename != "g.warc.gz" {
		t.Fatalf("%+v %v", caps, err)
	}
}

// An exclusion an operator added through the control topic (kept in Redis)
// is named with its prefix, and the exclusion rule decides.
func TestExplainControlExclusion(t *testing.T) {
	e, _, f := newTestFrontier(t, profile.Default())
	ctx := context.Background()
	seeds := scope.NewSeeds(e.cfg.Redis, f.Prefix())
	if err := seeds.Add(ctx, "http://a.example/", scope.SeedScopeRoot); err != nil {
		t.Fatal(err)
	}
	req := Request{URL: "http://a.example/private/x", Via: "http://a.example/", Hops: "L"}
	rep, err := e.Explain(ctx, req)
	if err != nil || !rep.Scope.Accepted || len(rep.Exclusions) != 0 {
		t.Fatalf("before the exclusion: %v %+v", err, rep.Scope)
	}
	if _, err := scope.NewExclusions(e.cfg.Redis, f.Prefix()).Add(ctx, []string{"http://(example,a,)/private/"}); err != nil {
		t.Fatal(err)
	}
	rep, err = e.Explain(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scope.Accepted || rep.Scope.RuleName != scope.ExclusionRuleName || len(rep.Exclusions) != 1 ||
		rep.Exclusions[0] != (Exclusion{Prefix: "http://(example,a,)/private/", Source: SourceControl}) ||
		!strings.Contains(rep.Verdict, "excluded by SURT prefix http://(example,a,)/private/") {
		t.Fatalf("after the exclusion: %+v %+v %q", rep.Scope, rep.Exclusions, rep.Verdict)
	}
}

// Explain says whether the exact URL is queued (where) or in flight
// (under which lease), in the JSON and the text.
func TestExplainURIState(t *testing.T) {
	e, _, f := newTestFrontier(t, profile.Default())
	ctx := context.Background()
	const u = "http://a.example/page"
	if err := scope.NewSeeds(e.cfg.Redis, f.Prefix()).Add(ctx, u, scope.SeedScopeRoot); err != nil {
		t.Fatal(err)
	}
	text := func(rep *Report) string {
		var b strings.Builder
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	rep, err := e.Explain(ctx, Request{URL: u})
	if err != nil || rep.URI == nil || rep.URI.State != frontier.URINone ||
		!strings.Contains(text(rep), "neither queued nor in flight") {
		t.Fatalf("not admitted: %v %+v", err, rep.URI)
	}
	res, err := f.Admit(ctx, []frontier.Candidate{{Policy: frontier.PolicyOf(profile.Default()),
		Launch: messages.Launch{URL: u, IsSeed: true, ParentURL: u}}})
	if err != nil || res[0].Verdict != frontier.Admitted {
		t.Fatalf("admit: %v %v", res, err)
	}
	rep, err = e.Explain(ctx, Request{URL: u})
	if err != nil || rep.URI == nil || rep.URI.State != frontier.URIQueued || rep.URI.Host != "a.example" || rep.URI.Position != 0 {
		t.Fatalf("queued: %v %+v", err, rep.URI)
	}
	if s := text(rep); !strings.Contains(s, "queued in host queue a.example, level 0, position 0") || !strings.Contains(rep.Verdict, "queued") {
		t.Fatalf("queued text:\n%s", s)
	}
	cs, _, err := f.Claim(ctx, 1, time.Minute)
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim: %v %v", cs, err)
	}
	rep, err = e.Explain(ctx, Request{URL: u})
	if err != nil || rep.URI == nil || rep.URI.State != frontier.URIInFlight || rep.URI.Lease != cs[0].Lease() {
		t.Fatalf("in flight: %v %+v", err, rep.URI)
	}
	b, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(b), `"state":"in-flight"`) || !strings.Contains(string(b), `"lease":`) {
		t.Fatalf("json: %s %v", b, err)
	}
	if s := text(rep); !strings.Contains(s, "in flight under lease") || rep.Verdict != "in scope; being fetched now" {
		t.Fatalf("in-flight text (verdict %q):\n%s", rep.Verdict, s)
	}
}
