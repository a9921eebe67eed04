package control

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/sheets"
)

// deleted is what the test's Delete hook finished.
type deleted struct {
	url, command string
}

// newTerminateFixture is an Applier whose Delete hook does what the
// worker's does to the frontier: take the selected URIs and finish them
// -6000.
func newTerminateFixture(t *testing.T) (*Applier, *frontier.Frontier, *[]deleted) {
	t.Helper()
	rdb := embeddedtest.Redis(t)
	f, err := frontier.New(rdb, "fc-npld", frontier.OptionsFrom(profile.Default()))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := sheets.New(context.Background(), profile.Default(), sheets.Options{Redis: rdb, KeyPrefix: f.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	var gone []deleted
	pol := frontier.PolicyOf(profile.Default())
	app, err := New(Config{Redis: rdb, Crawl: "fc", Stream: "npld", Worker: "w1", Frontier: f, Sheets: sh,
		Seeds: func(context.Context, messages.Control) (string, error) { return "", nil },
		Delete: func(ctx context.Context, sel frontier.Selector, c messages.Control) (int, error) {
			cs, err := f.TakeQueued(ctx, sel, time.Minute)
			if err != nil {
				return 0, err
			}
			for _, cl := range cs {
				d := frontier.Decision{Status: frontier.StatusDeleted}
				o := frontier.Outcome{Claim: cl, Status: frontier.StatusDeleted, NotFetched: true, Policy: pol, Decision: &d}
				if _, err := f.Complete(ctx, []frontier.Outcome{o}); err != nil {
					return 0, err
				}
				gone = append(gone, deleted{cl.Launch.URL, c.Command})
			}
			return len(cs), nil
		},
		Terminate: func(messages.Control) { t.Error("a terminate of a host or target stopped the worker") },
	})
	if err != nil {
		t.Fatal(err)
	}
	return app, f, &gone
}

func admitAll(t *testing.T, f *frontier.Frontier, urlsBySource map[string][]string) {
	t.Helper()
	var cs []frontier.Candidate
	for src, us := range urlsBySource {
		for _, u := range us {
			cs = append(cs, frontier.Candidate{Policy: frontier.PolicyOf(profile.Default()), Launch: messages.Launch{URL: u, ParentURL: u,
				ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: src}}}})
		}
	}
	res, err := f.Admit(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Verdict != frontier.Admitted {
			t.Fatalf("candidate %d: %v %v", i, r.Verdict, r.Err)
		}
	}
}

// Terminate of a target or a host: its queued URIs finish -6000 through
// the delete path, the one in flight is left to finish, nothing more of it
// is claimed, other work goes on; replayed, it changes nothing; it is
// acknowledged.
func TestTerminateHostAndTarget(t *testing.T) {
	app, f, gone := newTerminateFixture(t)
	ctx := context.Background()
	admitAll(t, f, map[string][]string{"tid:1": {"http://a.example/1"}})
	// One URI of tid:1 in flight.
	inflight, _, err := f.Claim(ctx, 1, time.Minute)
	if err != nil || len(inflight) != 1 || inflight[0].Launch.Source() != "tid:1" {
		t.Fatalf("claim: %v, %v", inflight, err)
	}
	admitAll(t, f, map[string][]string{"tid:1": {"http://a.example/2", "http://a.example/3"}})
	admitAll(t, f, map[string][]string{
		"tid:2": {"http://a.example/x", "http://b.example/1", "http://b.example/2", "http://c.example/1"},
	})
	term := messages.Control{ID: "tt1", Command: "terminate", Scope: "target", Source: "tid:1", By: "ops"}
	res, err := app.Apply(ctx, term)
	if err != nil || !res.Applied || !strings.Contains(res.Detail, "2 queued URIs deleted") {
		t.Fatalf("terminate target: %+v, %v", res, err)
	}
	if len(*gone) != 2 || (*gone)[0].command != messages.CommandTerminate {
		t.Fatalf("deleted %+v", *gone)
	}
	if res, err := app.Apply(ctx, term); err != nil || res.Applied {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	if a, err := Ack(ctx, app.cfg.Redis, "fc", "tt1"); err != nil || a.By != "ops" || !strings.Contains(a.Result, "terminated target tid:1") {
		t.Fatalf("ack: %+v, %v", a, err)
	}
	// A new URI of the target is admitted but not claimed; the URI in
	// flight finishes.
	admitAll(t, f, map[string][]string{"tid:1": {"http://a.example/late"}})
	if _, err := f.Complete(ctx, []frontier.Outcome{{Claim: inflight[0], Status: 200, Policy: frontier.PolicyOf(profile.Default())}}); err != nil {
		t.Fatal(err)
	}

	res, err = app.Apply(ctx, messages.Control{ID: "th1", Command: "terminate", Scope: "host", Host: "b.example"})
	if err != nil || !res.Applied || !strings.Contains(res.Detail, "2 queued URIs deleted") {
		t.Fatalf("terminate host: %+v, %v", res, err)
	}
	if res, err := app.Apply(ctx, messages.Control{ID: "th2", Command: "terminate", Scope: "host", Host: "b.example"}); err != nil ||
		!strings.Contains(res.Detail, "0 queued URIs deleted") {
		t.Fatalf("terminate host again: %+v, %v", res, err)
	}
	// Only tid:2's URIs on a.example and c.example are left to claim
	// (a.example once its politeness delay is over: not waited for here).
	var claimed []string
	for range 3 {
		cs, _, err := f.Claim(ctx, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			claimed = append(claimed, c.Launch.URL)
		}
	}
	for _, u := range claimed {
		if strings.HasPrefix(u, "http://b.example") || u == "http://a.example/late" {
			t.Errorf("claimed %s after its host or target was terminated", u)
		}
	}
	tc, err := f.TargetCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tc {
		if c.Source == "tid:1" && (c.Queued != 1 || c.InFlight != 0) {
			t.Errorf("tid:1 counts after terminate: %+v (want the late URI held)", c)
		}
	}
}
