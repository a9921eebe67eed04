package scope

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/trawler-crawl/trawler/internal/metricstest"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

func seedsWith(t *testing.T, urls ...string) *Seeds {
	t.Helper()
	s := NewSeeds(nil, "")
	for _, u := range urls {
		if err := s.Add(context.Background(), u, SeedScopeRoot); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestDefaultScope runs Heritrix's default rule list and checks the exact
// scopeDecision strings, including which rule is reported when a later
// rule is skipped because it could not change the decision.
func TestDefaultScope(t *testing.T) {
	dir := t.TempDir()
	cfg := profile.Default().Scope
	cfg.ExcludedSurtsFile = writeFile(t, dir, "exclude.txt", "+http://(org,example,www,)/private/\n")
	e := newEngine(t, cfg, Options{Seeds: seedsWith(t, "http://www.example.org/")})
	deep := strings.Repeat("L", 21)
	tests := []struct {
		url, via, hops string
		want           string
	}{
		{"http://www.example.org/page", "", "L", "ACCEPT by rule #2 SurtPrefixedDecideRule"},
		{"https://www.example.org/page", "", "L", "ACCEPT by rule #2 SurtPrefixedDecideRule"},
		{"http://elsewhere.example/", "", "L", "REJECT by rule #1 RejectDecideRule"},
		{"http://cdn.example/x.js", "http://www.example.org/", "LE", "ACCEPT by rule #4 TransclusionDecideRule"},
		{"http://www.example.org/deep", "", deep, "REJECT by rule #3 TooManyHopsDecideRule"},
		{"http://cdn.example/e.png", "", deep[:20] + "E", "ACCEPT by rule #4 TransclusionDecideRule"},
		{"http://www.example.org/a/a/a/", "", "L", "REJECT by rule #7 PathologicalPathDecideRule"},
		{"http://www.example.org" + distinctSegments(21), "", "L", "REJECT by rule #8 TooManyPathSegmentsDecideRule"},
		// Too deep and repetitive: PathologicalPath decides first, and the
		// path-depth rule, which could only say REJECT again, is skipped.
		{"http://www.example.org" + strings.Repeat("/p", 21), "", "L", "REJECT by rule #7 PathologicalPathDecideRule"},
		{"http://elsewhere.example/robots.txt", "", "LP", "ACCEPT by rule #9 PrerequisiteAcceptDecideRule"},
		// Already REJECTed: SchemeNotInSet (predicated REJECT) is skipped,
		// so rule #1 stays the deciding rule, as in Heritrix.
		{"mailto:someone@example.org", "", "L", "REJECT by rule #1 RejectDecideRule"},
		{"gopher://www.example.org/x", "", "L", "REJECT by rule #1 RejectDecideRule"},
		// The exclusion file is a final REJECT, even for prerequisites.
		{"http://www.example.org/private/doc", "", "L", "REJECT by rule #11 ExcludedSurtsDecideRule"},
		{"http://www.example.org/private/robots.txt", "", "LP", "REJECT by rule #11 ExcludedSurtsDecideRule"},
	}
	for _, tc := range tests {
		d := e.Decide(context.Background(), candidate(t, tc.url, tc.via, tc.hops, false))
		if d.String() != tc.want {
			t.Errorf("%s hops %q: %q, want %q", tc.url, tc.hops, d, tc.want)
		}
	}
	if !e.Excluded(candidate(t, "https://www.example.org/private/x", "", "", false).SURT) || e.Excluded("http://(org,example,www,)/public") {
		t.Fatal("Excluded disagrees with the exclusion file")
	}
	if (Decision{}).String() != "PASS (no rule decided)" || (Decision{}).Accepted() {
		t.Fatal("an empty decision must read as PASS and not admit")
	}
}

func distinctSegments(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("/p")
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

func TestExplain(t *testing.T) {
	e := newEngine(t, profile.Default().Scope, Options{Seeds: seedsWith(t, "http://a.example/")})
	d, steps := e.Explain(context.Background(), candidate(t, "mailto:x@a.example", "", "L", false))
	if d.String() != "REJECT by rule #1 RejectDecideRule" || len(steps) != 10 {
		t.Fatalf("decision %s with %d steps", d, len(steps))
	}
	last := steps[9]
	if last.Number != 10 || last.Rule != "SchemeNotInSetDecideRule" || !last.Skipped || last.Decision != "REJECT" {
		t.Fatalf("last step %+v, want SchemeNotInSet skipped", last)
	}
	if s := steps[1]; s.Rule != "SurtPrefixedDecideRule" || s.Skipped || s.Result != Pass {
		t.Fatalf("step 2 %+v, want SurtPrefixed run and PASS", s)
	}
}

// TestDecideConcurrently shares one engine between goroutines while seeds
// are added (run with -race).
func TestDecideConcurrently(t *testing.T) {
	seeds := seedsWith(t)
	e := newEngine(t, profile.Default().Scope, Options{Seeds: seeds})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				c := candidate(t, "http://h"+string(rune('a'+g))+".example/p", "", "L", false)
				_ = e.Decide(context.Background(), c)
				if i == 100 && g == 0 {
					if err := seeds.Add(context.Background(), "http://ha.example/", SeedScopeRoot); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if !e.Decide(context.Background(), candidate(t, "http://ha.example/p", "", "L", false)).Accepted() {
		t.Fatal("seed added during decisions not applied")
	}
}

func TestDecisionLogAndMetrics(t *testing.T) {
	dir := t.TempDir()
	cfg := scopeFromYAML(t, "logToFile: true\nlogExtraInfo: true\n")
	reg := prometheus.NewRegistry()
	e, err := New(cfg, Options{LogDir: dir, Registerer: reg, Seeds: seedsWith(t, "http://a.example/")})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://a.example/x", "http://b.example/y"} {
		c := candidate(t, u, "http://a.example/", "L", false)
		c.SourceTag = "tid:1:http://a.example/"
		e.Decide(context.Background(), c)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "scope.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z 2 SurtPrefixedDecideRule ACCEPT http://a\.example/x \{"hopPath":"L","host":"a\.example","seed":"tid:1:http://a\.example/","via":"http://a\.example/"\}$`),
		regexp.MustCompile(`^\S+ 1 RejectDecideRule REJECT http://b\.example/y \{.*\}$`),
	}
	if len(lines) != len(want) {
		t.Fatalf("scope.log has %d lines:\n%s", len(lines), b)
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i+1, lines[i], re)
		}
	}
	if got := metricstest.Value(t, reg, "trawler_scope_decisions_total", "ACCEPT", "2 SurtPrefixedDecideRule"); got != 1 {
		t.Fatalf("accept counter = %v, want 1", got)
	}
	if got := metricstest.Value(t, reg, "trawler_scope_decisions_total", "REJECT", "1 RejectDecideRule"); got != 1 {
		t.Fatalf("reject counter = %v, want 1", got)
	}
}

func TestDecisionLogDropsWhenFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scope.log")
	drops := 0
	l, err := OpenDecisionLog(path, DecisionLogOptions{Buffer: 1, OnDrop: func() { drops++ }})
	if err != nil {
		t.Fatal(err)
	}
	c := candidate(t, "http://a.example/", "", "", true)
	if err := l.Close(); err != nil { // nothing reads the queue any more
		t.Fatal(err)
	}
	for range 5 {
		l.Record(c, Decision{Result: Accept, Rule: 1, RuleName: "AcceptDecideRule"})
	}
	if l.Dropped() != 4 || drops != 4 {
		t.Fatalf("dropped %d (callback %d), want 4: Record must never block", l.Dropped(), drops)
	}
	if err := l.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "bad.txt", "+uk\n\nhttp://(uk,co,\n")
	tests := []struct {
		name, yaml string
		opts       Options
		want       string
	}{
		{"missing surts file", "rules:\n- {rule: SurtPrefixedDecideRule, surtsSourceFile: nope.txt}\n",
			Options{BaseDir: dir}, "line 3: scope.rules #1 (SurtPrefixedDecideRule): surtsSourceFile: surt file: stat " + filepath.Join(dir, "nope.txt")},
		{"bad surts file", "rules:\n- rule: RejectDecideRule\n- {rule: SurtPrefixedDecideRule, surtsSourceFile: bad.txt}\n",
			Options{BaseDir: dir}, filepath.Join(dir, "bad.txt") + ":3: looks like a SURT prefix"},
		{"bad inline surt", "rules:\n- {rule: OnDomainsDecideRule, surts: ['+uk', '-x']}\n",
			Options{}, `scope.rules #1 (OnDomainsDecideRule): surts[1] "-x": "-" lines are not supported`},
		{"missing exclusion file", "excludedSurtsFile: gone.txt\n", Options{BaseDir: dir}, "scope.excludedSurtsFile: surt file:"},
		{"log without dir", "logToFile: true\n", Options{}, "scope.logToFile: no log directory"},
		{"missing geo db", "rules:\n- {rule: ExternalGeoLocationDecideRule, countryCodes: [GB], database: none.mmdb}\n",
			Options{BaseDir: dir}, "ExternalGeoLocationDecideRule): database: open geoip database " + filepath.Join(dir, "none.mmdb")},
		{"geo db not mmdb", "rules:\n- {rule: ExternalGeoLocationDecideRule, countryCodes: [GB], database: bad.txt}\n",
			Options{BaseDir: dir}, "open geoip database"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(scopeFromYAML(t, tc.yaml), tc.opts)
			if err == nil {
				_ = e.Close()
				t.Fatalf("New succeeded, want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q\nwant containing %q", err, tc.want)
			}
		})
	}
}

func TestNewCandidate(t *testing.T) {
	c, err := NewCandidate("https://WWW.Example.org:443/a/b?q=1#frag")
	if err != nil || c.SURT != "http://(org,example,www,)/a/b?q=1" || c.Parsed().Scheme() != "https" {
		t.Fatalf("%+v, %v", c, err)
	}
	parsed, err := uri.Parse("https://www.example.org/a/b?q=1#frag")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewCandidateParsed(parsed)
	if err != nil || p.URL != "https://www.example.org/a/b?q=1" || p.SURT != c.SURT {
		t.Fatalf("parsed: %+v, %v", p, err)
	}
	for _, bad := range []string{"", "  ", "http://exa mple.org/", "not a url"} {
		if _, err := NewCandidate(bad); err == nil {
			t.Errorf("NewCandidate(%q) succeeded", bad)
		}
	}
	if _, err := NewCandidateParsed(nil); err == nil {
		t.Error("NewCandidateParsed(nil) succeeded")
	}
	// A candidate built by hand without Parsed must not panic any rule.
	e := newEngine(t, profile.Default().Scope, Options{})
	_ = e.Decide(context.Background(), &Candidate{URL: "http://a.example/", SURT: "http://(example,a,)/", HopPath: "L"})
}
