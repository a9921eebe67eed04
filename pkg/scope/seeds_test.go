package scope

import (
	"bufio"
	"context"
	"os"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// seedScopeYAML is the seed part of Heritrix's default scope with the
// UKWA-style subdomain rule: reject all, accept under seed prefixes.
const seedScopeYAML = `rules:
- rule: RejectDecideRule
- rule: SurtPrefixedDecideRule
`

// TestSeedScopesAsTheLauncherSendsThem feeds seeds through launch
// messages, shared between two workers through Redis, and checks what each
// seed scope admits on the other worker.
func TestSeedScopesAsTheLauncherSendsThem(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	ingest := NewSeeds(rdb, "{fc}:")
	other := NewSeeds(rdb, "{fc}:") // a worker that never saw the launches
	launches := []messages.Launch{
		{URL: "https://www.council.example.gov.uk/", IsSeed: true, Sheets: []string{"ignoreRobots", "subdomainsScope", "higherLimit"}},
		{URL: "http://blog.example.com/posts/", IsSeed: true, Sheets: []string{"plus1Scope"}},
		{URL: "http://files.example.net/report.pdf", IsSeed: true, Sheets: []string{"resourceScope"}},
		{URL: "https://www.example.org/main/subsection", IsSeed: true},
	}
	for _, l := range launches {
		if err := ingest.Add(ctx, l.URL, SeedScopeFromSheets(l.Sheets)); err != nil {
			t.Fatal(err)
		}
	}
	// Adding again changes nothing (the log holds each entry once).
	if err := ingest.Add(ctx, launches[0].URL, SeedScopeSubdomains); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.LLen(ctx, "{fc}:scope:seedlog").Result(); err != nil || n != 5 {
		t.Fatalf("seed log holds %d entries (%v), want 5", n, err)
	}
	if err := other.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, scopeFromYAML(t, seedScopeYAML), Options{Seeds: other})
	tests := []struct {
		url, via string
		accept   bool
	}{
		// subdomainsScope: the whole domain, www or not.
		{"http://news.council.example.gov.uk/a", "", true},
		{"https://council.example.gov.uk/", "", true},
		{"http://www.council.example.gov.uk/x/y", "", true},
		{"http://council2.example.gov.uk/", "", false},
		// plus1Scope: under the prefix, and one hop out from a page under it.
		{"http://blog.example.com/posts/1", "", true},
		{"http://cdn.example.net/pic.png", "http://blog.example.com/posts/1", true},
		{"http://cdn.example.net/more", "http://cdn.example.net/pic.png", false},
		{"http://blog.example.com/about", "", false},
		// resourceScope: the seed itself only.
		{"http://files.example.net/report.pdf", "", true},
		{"http://files.example.net/other.pdf", "", false},
		// no scope sheet: the implied prefix, https folded.
		{"http://www.example.org/main/page", "", true},
		{"http://www.example.org/other", "", false},
	}
	for _, tc := range tests {
		c := candidate(t, tc.url, tc.via, "L", false)
		if d := e.Decide(ctx, c); d.Accepted() != tc.accept {
			t.Errorf("%s via %q: %s, want accept=%v", tc.url, tc.via, d, tc.accept)
		}
	}
}

// TestSeedsFromGoldenLaunches adds the seeds of the shared golden launch
// messages and checks the subdomain seed among them.
func TestSeedsFromGoldenLaunches(t *testing.T) {
	f, err := os.Open("testdata/launch-messages.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	seeds := NewSeeds(nil, "")
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		l, err := messages.DecodeLaunch(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if l.IsSeed {
			n++
			if err := seeds.Add(context.Background(), l.URL, SeedScopeFromSheets(l.Sheets)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n == 0 || seeds.Len() == 0 {
		t.Fatalf("no seeds read (%d launches)", n)
	}
	e := newEngine(t, scopeFromYAML(t, seedScopeYAML), Options{Seeds: seeds})
	for url, want := range map[string]bool{
		"http://planning.council.example.gov.uk/": true, // seed sent with subdomainsScope
		"http://news.example.org/story/2":         true,
		"http://other.example.org/":               false,
	} {
		if d := e.Decide(context.Background(), candidate(t, url, "", "L", false)); d.Accepted() != want {
			t.Errorf("%s: %s, want accept=%v", url, d, want)
		}
	}
}

func TestSeedsBadInput(t *testing.T) {
	s := NewSeeds(nil, "")
	for _, bad := range []string{"", "   ", "%%%:"} {
		if err := s.Add(context.Background(), bad, SeedScopeRoot); err == nil {
			t.Errorf("Add(%q) succeeded", bad)
		}
	}
	if s.Len() != 0 {
		t.Fatal("bad seeds were added")
	}
}

// TestSeedsRedisRebuilt: when Redis loses the log and seeds are added
// again, a worker keeps what it knew and picks up the new entries.
func TestSeedsRedisRebuilt(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	a, b := NewSeeds(rdb, "{x}:"), NewSeeds(rdb, "{x}:")
	for _, u := range []string{"http://a.example/", "http://b.example/", "http://c.example/"} {
		if err := a.Add(ctx, u, SeedScopeRoot); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Refresh(ctx); err != nil || b.Len() != 3 {
		t.Fatalf("b has %d prefixes (%v), want 3", b.Len(), err)
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(ctx, "http://d.example/", SeedScopeRoot); err != nil {
		t.Fatal(err)
	}
	if err := b.Refresh(ctx); err != nil || b.Len() != 4 {
		t.Fatalf("b has %d prefixes (%v) after the rebuild, want 4", b.Len(), err)
	}
}

func TestSeedScopeFromSheets(t *testing.T) {
	tests := []struct {
		sheets []string
		want   SeedScope
	}{
		{nil, SeedScopeRoot},
		{[]string{"ignoreRobots", "higherLimit"}, SeedScopeRoot},
		{[]string{"resourceScope"}, SeedScopeResource},
		{[]string{"plus1Scope", "noLimit"}, SeedScopePlus1},
		{[]string{"ignoreRobots", "subdomainsScope"}, SeedScopeSubdomains},
		{[]string{"resourceScope", "subdomainsScope"}, SeedScopeSubdomains},
	}
	for _, tc := range tests {
		if got := SeedScopeFromSheets(tc.sheets); got != tc.want {
			t.Errorf("SeedScopeFromSheets(%q) = %s, want %s", tc.sheets, got, tc.want)
		}
	}
}
