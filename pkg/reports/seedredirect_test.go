package reports

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// seedsReportOf writes the reports of evs (added in the given order) and
// returns seeds-report.txt and the seed lines of crawl-report.txt.
func seedsReportOf(t *testing.T, o Options, evs []messages.Crawled) (seeds, summary string) {
	t.Helper()
	a := New(o)
	for _, ev := range evs {
		a.Add(ev)
	}
	dir := t.TempDir()
	if err := a.WriteAll(dir, RunInfo{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, SeedsReport))
	if err != nil {
		t.Fatal(err)
	}
	c, err := os.ReadFile(filepath.Join(dir, CrawlReport))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.Lines(string(c)) {
		if strings.HasPrefix(l, "seeds ") {
			lines = append(lines, l)
		}
	}
	return string(b), strings.Join(lines, "")
}

// A seed that redirects, through a chain, to the page that answers: with
// seedsRedirectNewSeeds every target within the bound is a seed of its
// own, each naming where it redirected to; the loop back to the first
// seed and the link past the bound add none. Without the setting only the
// given seed is listed, with its redirect, as Heritrix reports it.
func TestSeedsReportRedirectSeeds(t *testing.T) {
	ev := func(url string, status int, hops, via string) messages.Crawled {
		return messages.Crawled{URL: url, StatusCode: status, HopPath: hops, Via: via, Host: strings.Split(url, "/")[2]}
	}
	evs := []messages.Crawled{
		ev("http://a.example/", 301, "", ""),
		ev("http://b.example/", 302, "R", "http://a.example/"),
		ev("https://c.example/", 200, "RR", "http://b.example/"),
		ev("https://c.example/page", 200, "RRL", "https://c.example/"), // an outlink: not a seed
		ev("http://l1.example/", 301, "", ""),                          // a loop
		ev("http://l2.example/", 301, "R", "http://l1.example/"),
		ev("http://l1.example/", 301, "RR", "http://l2.example/"),    // back to the seed
		ev("http://e.example/", 301, "RRRR", "http://d.example/"),    // its via was never a seed
		ev("http://x.example/", 301, "", ""),                         // a chain past the bound
		ev("http://x1.example/", 301, "R", "http://x.example/"),      //
		ev("http://x2.example/", 301, "RR", "http://x1.example/"),    //
		ev("http://x3.example/", 301, "RRR", "http://x2.example/"),   //
		ev("http://x4.example/", 301, "RRRR", "http://x3.example/"),  // the last seed
		ev("http://x5.example/", 200, "RRRRR", "http://x4.example/"), // past the bound
	}
	const want = "[code] [status] [seed] [redirect]\n" +
		"302 CRAWLED http://b.example/ https://c.example/\n" +
		"301 CRAWLED http://a.example/ http://b.example/\n" +
		"301 CRAWLED http://l2.example/ http://l1.example/\n" + // by redirect, then seed
		"301 CRAWLED http://l1.example/ http://l2.example/\n" +
		"301 CRAWLED http://x.example/ http://x1.example/\n" +
		"301 CRAWLED http://x1.example/ http://x2.example/\n" +
		"301 CRAWLED http://x2.example/ http://x3.example/\n" +
		"301 CRAWLED http://x3.example/ http://x4.example/\n" +
		"301 CRAWLED http://x4.example/ http://x5.example/\n" +
		"200 CRAWLED https://c.example/\n"
	o := Options{Seeds: []string{"http://a.example/", "http://l1.example/", "http://x.example/"}, RedirectSeedHops: 5}
	// The journal's partitions give events in any order: a target's event
	// may come before its via's.
	for _, order := range []string{"journal", "reversed"} {
		in := slices.Clone(evs)
		if order == "reversed" {
			slices.Reverse(in)
		}
		got, summary := seedsReportOf(t, o, in)
		if got != want {
			t.Errorf("%s order: seeds report\n%s\nwant\n%s", order, got, want)
		}
		if summary != "seeds crawled: 10\nseeds uncrawled: 0\n" {
			t.Errorf("%s order: crawl report says\n%s", order, summary)
		}
	}

	o.RedirectSeedHops = 0
	got, _ := seedsReportOf(t, o, evs)
	const off = "[code] [status] [seed] [redirect]\n" +
		"301 CRAWLED http://a.example/ http://b.example/\n" +
		"301 CRAWLED http://l1.example/ http://l2.example/\n" +
		"301 CRAWLED http://x.example/ http://x1.example/\n"
	if got != off {
		t.Errorf("without seedsRedirectNewSeeds: seeds report\n%s\nwant\n%s", got, off)
	}
}
