package scope

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

// Benchmarks for the targets: a scope of 1M SURT prefixes loads in
// under 5 s and decides a URI in under 2 µs on average.
//
//	go test -run '^$' -bench . -benchmem ./pkg/scope/

const benchPrefixes = 1_000_000

var benchTLDs = []string{"uk", "com", "org", "net", "scot", "wales", "de", "fr"}

// benchLine is the i-th line of the synthetic million-line SURT file: half
// literal prefixes, half URLs whose implied prefix must be computed.
func benchLine(i int) string { return benchLineOf(i, false) }

// benchLineOf gives only literal prefixes when literal is set (exclusion
// and domain files are usually written that way).
func benchLineOf(i int, literal bool) string {
	tld := benchTLDs[i%len(benchTLDs)]
	if literal || i%2 == 0 {
		return fmt.Sprintf("+http://(%s,co,site%d,", tld, i)
	}
	return fmt.Sprintf("https://www.host%d.example.%s/section%d/page.html", i, tld, i%97)
}

func writeBenchFile(b *testing.B, literal bool) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "surts.txt")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "# benchmark scope")
	for i := range benchPrefixes {
		fmt.Fprintln(w, benchLineOf(i, literal))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkLoadMillionPrefixFile is one full load of a 1M-line watched
// SURT file: read, parse (implied prefixes included), sort, deduplicate;
// "mixed" has half URL lines (a WHATWG parse each), "literal" only +SURTs.
func BenchmarkLoadMillionPrefixFile(b *testing.B) {
	for _, literal := range []bool{false, true} {
		name := map[bool]string{false: "mixed", true: "literal"}[literal]
		b.Run(name, func(b *testing.B) { benchLoadFile(b, literal) })
	}
}

func benchLoadFile(b *testing.B, literal bool) {
	path := writeBenchFile(b, literal)
	defer reportCPU(b, "cpu-s/op", time.Second)()
	for b.Loop() {
		w, err := newWatchedSet(path, convNone)
		if err != nil {
			b.Fatal(err)
		}
		if n := w.load().Len(); n != benchPrefixes {
			b.Fatalf("%d prefixes loaded", n)
		}
	}
}

// reportCPU, deferred after set-up, reports the CPU time per iteration in
// unit (on a machine shared with other work, wall time overstates it).
func reportCPU(b *testing.B, name string, unit time.Duration) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(unit)/float64(b.N), name)
		}
	}
}

// BenchmarkLoadMillionSeeds replays a 1M-entry seed log into a Seeds set,
// as a worker does on start-up from Redis (without the network).
func BenchmarkLoadMillionSeeds(b *testing.B) {
	entries := make([]string, benchPrefixes)
	for i := range entries {
		p, _, err := PrefixFromLine(benchLine(i))
		if err != nil {
			b.Fatal(err)
		}
		entries[i] = entryPrefix + p
	}
	defer reportCPU(b, "cpu-s/op", time.Second)()
	for b.Loop() {
		s := NewSeeds(nil, "")
		for start := 0; start < len(entries); start += refreshBatch {
			s.mu.Lock()
			s.apply(entries[start:min(start+refreshBatch, len(entries))])
			s.mu.Unlock()
		}
		if s.Len() != benchPrefixes {
			b.Fatalf("%d seeds", s.Len())
		}
	}
}

// millionSeedEngine is Heritrix's default scope over 1M seed prefixes plus
// a 1M-line exclusion-style file feeding the second SurtPrefixed rule.
func millionSeedEngine(b *testing.B, cfg profile.Scope) *Engine {
	b.Helper()
	seeds := NewSeeds(nil, "")
	entries := make([]string, benchPrefixes)
	for i := range entries {
		p, _, _ := PrefixFromLine(benchLine(i))
		entries[i] = entryPrefix + p
	}
	seeds.mu.Lock()
	seeds.apply(entries)
	seeds.mu.Unlock()
	return newEngine(b, cfg, Options{Seeds: seeds})
}

// benchCandidates mixes accepted, rejected and transcluded URIs.
func benchCandidates(b *testing.B) []*Candidate {
	b.Helper()
	var out []*Candidate
	for i := 0; i < 1000; i++ {
		tld := benchTLDs[i%len(benchTLDs)]
		var u, hops string
		switch i % 4 {
		case 0: // under a literal domain prefix
			u, hops = fmt.Sprintf("http://www.site%d.co.%s/news/2024/01/story-%d.html?ref=home", i*2, tld, i), "LL"
		case 1: // under a URL seed's implied prefix
			j := i*2 + 1
			u, hops = fmt.Sprintf("https://www.host%d.example.%s/section%d/other.html", j, tld, j%97), "L"
		case 2: // off-site link: rejected
			u, hops = fmt.Sprintf("http://elsewhere%d.example.net/a/b/c.html", i), "LLL"
		default: // off-site embed: transclusion
			u, hops = fmt.Sprintf("https://cdn%d.example.com/img/%d.png", i, i), "LE"
		}
		c, err := NewCandidate(u)
		if err != nil {
			b.Fatal(err)
		}
		c.HopPath, c.Via = hops, "http://www.site0.co.uk/"
		out = append(out, c)
	}
	return out
}

// BenchmarkDecide is one decision with Heritrix's default rule list over
// 1M seed prefixes, on a prepared candidate.
func BenchmarkDecide(b *testing.B) {
	e := millionSeedEngine(b, profile.Default().Scope)
	cands := benchCandidates(b)
	ctx := context.Background()
	accepted, i := 0, 0
	defer reportCPU(b, "cpu-ns/op", time.Nanosecond)()
	for b.Loop() {
		if e.Decide(ctx, cands[i%len(cands)]).Accepted() {
			accepted++
		}
		i++
	}
	if accepted == 0 || accepted == i {
		b.Fatalf("%d of %d accepted: the mix is not exercising both outcomes", accepted, i)
	}
}

// BenchmarkDecideUKWA adds UKWA's frequent-crawl exclusion regexes (21
// patterns, checked on every URI that is not already rejected).
func BenchmarkDecideUKWA(b *testing.B) {
	rules := profile.DefaultRules()
	for i := range rules {
		if rules[i].Name == "MatchesListRegexDecideRule" {
			rules[i].RegexList = ukwaExcludes
		}
	}
	cfg := profile.Default().Scope
	cfg.Rules = profile.NewRuleList(rules...)
	e := millionSeedEngine(b, cfg)
	cands := benchCandidates(b)
	ctx := context.Background()
	i := 0
	defer reportCPU(b, "cpu-ns/op", time.Nanosecond)()
	for b.Loop() {
		e.Decide(ctx, cands[i%len(cands)])
		i++
	}
}

// BenchmarkNewCandidate is the per-URI preparation the caller pays before
// Decide: WHATWG parse and Heritrix SURT (which parses again), or only the
// SURT when the caller already holds the parsed URL.
func BenchmarkNewCandidate(b *testing.B) {
	u := "https://www.host12345.example.uk/section7/news/2024/story.html?ref=home"
	b.Run("string", func(b *testing.B) {
		defer reportCPU(b, "cpu-ns/op", time.Nanosecond)()
		for b.Loop() {
			if _, err := NewCandidate(u); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parsed", func(b *testing.B) {
		parsed, err := uri.Parse(u)
		if err != nil {
			b.Fatal(err)
		}
		defer reportCPU(b, "cpu-ns/op", time.Nanosecond)()
		for b.Loop() {
			if _, err := NewCandidateParsed(parsed); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// ukwaExcludes are the regexes of UKWA's frequent-crawl excludes.xml.
var ukwaExcludes = strings.Split(strings.TrimSpace(`
^.+ProductCats\.asp\?Keywords=.+xargs=.+$
^.+index\.php\?Keywords=.+xargs=.+$
^.+\.uk/.*\bcheckout\b.*$
^.+GetSearchResults\.php\?Query=.*%5C.*$
^.+index\.php.+index\.php.*$
^.{512,}$
^.+camcycle\.org.+camcycle\.org.*$
^.+/cart/add/.+$
^.+jobs\.staffs\.ac\.uk/[A-Za-z0-9+/]{20,}.+$
^.+%20%20%20.+$
^.+/cms/events/calendar/.+/2014/.+$
^.+/cms/events/calendar/.+/2012/.+$
^.+ncl\.ac\.uk.+https%3.+$
^https?://[^/]+/catalog/product_compare/(add|remove)/.+$
^.+index\.php\?qs=06oENya.+$
^https?://[^/]+\.bbc\.co\.uk/iplayer/.*$
^.+action=buy_now.*$
^.+?mobile_switch=mobile
^https?://twitter\.com/.+\?lang=.+$
.*\?(?:.*&)?replytocom=\d+
https?://[^/]+/wp-admin/.*`), "\n")

// BenchmarkPrefixSetLookup is one ContainsPrefixOf on a 1M-member set
// (literal prefixes, each under a different domain), the core of the
// SURT rules.
func BenchmarkPrefixSetLookup(b *testing.B) {
	list := make([]string, benchPrefixes)
	for i := range list {
		list[i], _, _ = PrefixFromLine(benchLineOf(i, true))
	}
	set := NewPrefixSet(list)
	qs := make([]string, 1024)
	for i := range qs {
		qs[i] = fmt.Sprintf("http://(%s,co,site%d,www,)/news/2024/story.html", benchTLDs[i%len(benchTLDs)], i*977)
	}
	hits, i := 0, 0
	defer reportCPU(b, "cpu-ns/op", time.Nanosecond)()
	for b.Loop() {
		if set.ContainsPrefixOf(qs[i%len(qs)]) {
			hits++
		}
		i++
	}
	if hits == 0 {
		b.Fatal("no lookup hit")
	}
}
