package reports

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var reportNames = []string{CrawlReport, SeedsReport, HostsReport, SourceReport, MimetypeReport, ResponseCodeReport}

// loadEvents decodes testdata/events.jsonl, failing on any bad line.
func loadEvents(t *testing.T) []messages.Crawled {
	t.Helper()
	f, err := os.Open("testdata/events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var evs []messages.Crawled
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		ev, err := messages.DecodeCrawled(sc.Bytes())
		if err != nil {
			t.Fatalf("events.jsonl line %d: %v", n, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// compareDir checks every report in got against the golden directory.
func compareDir(t *testing.T, got, golden string) {
	t.Helper()
	for _, name := range reportNames {
		want, err := os.ReadFile(filepath.Join(golden, name))
		if err != nil {
			t.Fatal(err)
		}
		have, err := os.ReadFile(filepath.Join(got, name))
		if err != nil {
			t.Fatalf("%s not written: %v", name, err)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s differs\n--- got\n%s--- want\n%s", name, have, want)
		}
	}
}

var seeds = []string{"https://news.example.org/", "http://blog.example.com/", "https://gone.example.net/", "https://never.example.org/"}

func goldenRun() RunInfo {
	start := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	return RunInfo{
		Start: start, End: start.Add(4321 * time.Millisecond), Status: "Finished",
		Remaining: func(host string) int64 {
			if host == "news.example.org" {
				return 7
			}
			return 0
		},
	}
}

func TestGoldenReports(t *testing.T) {
	a := New(Options{CrawlName: "frequent-npld", Seeds: seeds})
	for _, ev := range loadEvents(t) {
		a.Add(ev)
	}
	dir := t.TempDir()
	if err := a.WriteAll(dir, goldenRun()); err != nil {
		t.Fatal(err)
	}
	compareDir(t, dir, "testdata")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(reportNames) {
		t.Errorf("dir holds %d files, want only the %d reports (temporary files left?)", len(entries), len(reportNames))
	}
}

func TestConcurrentAddMatchesGolden(t *testing.T) {
	a := New(Options{CrawlName: "frequent-npld", Seeds: seeds})
	evs := loadEvents(t)
	// Seed redirects need the seed before its R child when the seed is not
	// listed; all golden seeds are listed, so any order gives the same result.
	var wg sync.WaitGroup
	for _, ev := range evs {
		wg.Go(func() { a.Add(ev) })
	}
	wg.Wait()
	dir := t.TempDir()
	if err := a.WriteAll(dir, goldenRun()); err != nil {
		t.Fatal(err)
	}
	compareDir(t, dir, "testdata")
}

func TestEmptyCrawl(t *testing.T) {
	a := New(Options{CrawlName: "empty"})
	dir := filepath.Join(t.TempDir(), "reports", "nested")
	if err := a.WriteAll(dir, RunInfo{}); err != nil {
		t.Fatal(err)
	}
	compareDir(t, dir, "testdata/empty")
}

func TestBadEventsCounted(t *testing.T) {
	a := New(Options{CrawlName: "empty"})
	bad := []messages.Crawled{
		{},                                  // no URL
		{URL: "   ", StatusCode: 200},       // blank URL
		{URL: "not a url", StatusCode: 200}, // no host to tally under
		{URL: "http://[::1", StatusCode: 200},
	}
	for _, ev := range bad {
		a.Add(ev)
	}
	if got := a.Bad(); got != int64(len(bad)) {
		t.Errorf("Bad() = %d, want %d", got, len(bad))
	}
	dir := t.TempDir()
	if err := a.WriteAll(dir, RunInfo{}); err != nil {
		t.Fatal(err)
	}
	compareDir(t, dir, "testdata/empty")
}

func TestMaxKeysBoundsTables(t *testing.T) {
	a := New(Options{CrawlName: "x", MaxKeys: 2})
	for _, h := range []string{"a.example", "b.example", "c.example"} {
		a.Add(messages.Crawled{URL: "http://" + h + "/x", Host: h, StatusCode: 200, Mimetype: "text/" + h, HopPath: "L"})
	}
	if got := a.Dropped(); got != 2 { // third host and third MIME type
		t.Errorf("Dropped() = %d, want 2", got)
	}
	if len(a.hosts) != 2 || len(a.mimes) != 2 {
		t.Errorf("tables grew past MaxKeys: %d hosts, %d mimes", len(a.hosts), len(a.mimes))
	}
	if a.succeeded != 3 {
		t.Errorf("totals must still count every event: succeeded = %d", a.succeeded)
	}
}

func TestWriteAllError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := New(Options{}).WriteAll(filepath.Join(file, "sub"), RunInfo{}); err == nil {
		t.Fatal("WriteAll under a regular file succeeded")
	}
}

func TestSeedOrderFollowsHeritrixOverflow(t *testing.T) {
	// SeedRecord.sortShiftStatusCode overflows for positive codes, so
	// uncrawled seeds (0, then negatives descending) precede crawled ones
	// (descending).
	codes := []int{200, -1, 404, 0, -9998, 1, 2}
	want := []int{1, 0, -1, -9998, 404, 200, 2}
	recs := make([]int, len(codes))
	copy(recs, codes)
	for i := range recs {
		for j := i + 1; j < len(recs); j++ {
			if seedSortKey(recs[j]) < seedSortKey(recs[i]) {
				recs[i], recs[j] = recs[j], recs[i]
			}
		}
	}
	for i := range want {
		if recs[i] != want[i] {
			t.Fatalf("order = %v, want %v", recs, want)
		}
	}
}

func TestFormatDecimal(t *testing.T) {
	tests := []struct {
		v          float64
		maxF, minF int
		want       string
	}{
		{0.24, 2, 0, "0.24"},
		{2.5457, 2, 0, "2.55"},
		{0.125, 2, 0, "0.12"}, // exact tie: half-even
		{0.375, 2, 0, "0.38"},
		{12, 2, 0, "12"},
		{1.5, 2, 0, "1.5"},
		{1234567.891, 2, 0, "1,234,567.89"},
		{0.001, 2, 0, "0"},
		{9.96, 1, 1, "10.0"},
		{2, 1, 1, "2.0"},
		{math.NaN(), 2, 0, "NaN"},
		{math.Inf(1), 2, 0, "∞"},
		{-1234.5, 2, 0, "-1,234.5"},
	}
	for _, tt := range tests {
		if got := formatDecimal(tt.v, tt.maxF, tt.minF); got != tt.want {
			t.Errorf("formatDecimal(%v, %d, %d) = %q, want %q", tt.v, tt.maxF, tt.minF, got, tt.want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{-5, "0 B"}, {0, "0 B"}, {1, "1 B"}, {1023, "1,023 B"}, {1024, "1.0 KiB"},
		{1536, "1.5 KiB"}, {10 * 1024, "10 KiB"}, {23865329, "23 MiB"},
		{5 << 40, "5.0 TiB"}, {5000 << 40, "5,000 TiB"},
	}
	for _, tt := range tests {
		if got := formatBytes(tt.n); got != tt.want {
			t.Errorf("formatBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		ms   int64
		want string
	}{
		{0, "0ms"}, {5, "5ms"}, {1000, "1s"}, {5618651, "1h33m38s651ms"},
		{86_400_000 + 60_000, "1d1m"}, {-1500, "-1s500ms"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.ms); got != tt.want {
			t.Errorf("formatDuration(%d) = %q, want %q", tt.ms, got, tt.want)
		}
	}
}

func TestFixUpName(t *testing.T) {
	tests := map[string]string{
		"dns:": "dns:", "whois:": "whois:", "www.example.com": "www.example.com",
		"[::1]": "%5B%3A%3A1%5D", "a b~c*d_e": "a+b%7Ec*d_e",
	}
	for in, want := range tests {
		if got := fixUpName(in); got != want {
			t.Errorf("fixUpName(%q) = %q, want %q", in, got, want)
		}
	}
}
