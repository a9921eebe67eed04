package qa

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/replay"
)

const goodLog = `2025-05-06T07:08:01.000Z   200       1299 http://a.test/robots.txt P http://a.test/ text/plain #001 20250506070800500+20 sha1:X http://a.test/ -
2025-05-06T07:08:02.000Z   200       5000 http://a.test/ - - text/html #001 20250506070801500+20 sha1:Y http://a.test/ -
2025-05-06T07:08:03.000Z   200       5000 http://a.test/p1 L http://a.test/ text/html #002 20250506070802500+20 sha1:Z http://a.test/ -
2025-05-06T07:08:04.000Z   404        100 http://a.test/gone L http://a.test/ text/html #002 20250506070803500+20 sha1:Z http://a.test/ -
2025-05-06T07:08:05.000Z   200        100 http://a.test/s.css E http://a.test/ text/css #002 20250506070804500+20 sha1:Z http://a.test/ -
2025-05-06T07:08:06.000Z   200       5000 http://b.test/ - - text/html #003 20250506070805500+20 sha1:Z http://b.test/ -
2025-05-06T07:09:02.000Z   200       5000 http://a.test/ - - text/html #001 20250506070901500+20 sha1:Y http://a.test/ -
2025-05-06T07:09:03.000Z   200       5000 screenshot:http://a.test/ - - text/html #001 20250506070901500+20 sha1:Y http://a.test/ -
`

func writeLog(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "crawl.log")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func urls(ps []Page) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.URL+"@"+p.Timestamp)
	}
	return strings.Join(s, " ")
}

// Pages are the 2xx HTML captures of http(s) URLs, each URL once at its
// last capture, kept by source and time and sampled evenly.
func TestReadPages(t *testing.T) {
	log := writeLog(t, goodLog)
	t0, _ := time.Parse(time.RFC3339, "2025-05-06T07:08:03Z")
	for _, tc := range []struct {
		name string
		sel  Selection
		want string
	}{
		{"all", Selection{}, "http://a.test/@20250506070901 http://a.test/p1@20250506070802 http://b.test/@20250506070805"},
		{"source", Selection{Source: "http://b.test/"}, "http://b.test/@20250506070805"},
		{"from", Selection{From: t0}, "http://a.test/p1@20250506070802 http://b.test/@20250506070805 http://a.test/@20250506070901"},
		{"to", Selection{To: t0}, "http://a.test/@20250506070801 http://a.test/p1@20250506070802"},
		{"sample", Selection{Sample: 2}, "http://a.test/@20250506070901 http://a.test/p1@20250506070802"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, bad, err := ReadPages([]string{log}, tc.sel)
			if err != nil || len(bad) != 0 {
				t.Fatalf("err %v, bad %v", err, bad)
			}
			if got := urls(ps); got != tc.want {
				t.Errorf("pages %s\nwant  %s", got, tc.want)
			}
		})
	}
	ps, _, _ := ReadPages([]string{log}, Selection{Source: "http://a.test/"})
	if p := ps[1]; p.HopPath != "L" || p.Via != "http://a.test/" || p.Source != "http://a.test/" {
		t.Errorf("page %+v: want hop L via and source http://a.test/", p)
	}
}

// A bad line is reported with its file, line and reason and skipped; the
// lines around it are read; a missing file is an error naming it.
func TestReadPagesBadInput(t *testing.T) {
	text := "garbage\n" + strings.Split(goodLog, "\n")[1] + "\n" +
		"yesterday   200 5000 http://a.test/x - - text/html #001 20250506070801500+20 sha1:Y src -\n" +
		"2025-05-06T07:08:02.000Z   OK 5000 http://a.test/y - - text/html #001 20250506070801500+20 sha1:Y src -\n" +
		strings.Repeat("x", maxLogLine+10) + "\n" +
		strings.Split(goodLog, "\n")[2] // no final newline: still read
	log := writeLog(t, text)
	ps, bad, err := ReadPages([]string{log}, Selection{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := urls(ps), "http://a.test/@20250506070801 http://a.test/p1@20250506070802"; got != want {
		t.Errorf("pages %s, want %s", got, want)
	}
	wantBad := []string{":1: 1 fields, want at least 11", `:3: time "yesterday" is not ISO 8601`, `:4: status "OK" is not a number`, ":5: longer than"}
	if len(bad) != len(wantBad) {
		t.Fatalf("bad lines %v, want %d", bad, len(wantBad))
	}
	for i, w := range wantBad {
		if !strings.Contains(bad[i].Error(), log+w) {
			t.Errorf("bad line %q, want %q", bad[i].Error(), log+w)
		}
	}
	if _, _, err := ReadPages([]string{filepath.Join(t.TempDir(), "none.log")}, Selection{}); err == nil || !strings.Contains(err.Error(), "none.log") {
		t.Errorf("missing file: err %v, want one naming it", err)
	}
}

func f(v float64) *float64 { return &v }

func sampleResults() []PageResult {
	return []PageResult{
		{Page: Page{URL: "http://a.test/", Timestamp: "20250506070801", Source: "http://a.test/"}, Score: 1, Severity: Good,
			Resources: f(1), Outcomes: map[string]int{"answered": 3}, Requested: 3, Missing: []string{}},
		{Page: Page{URL: "http://a.test/p<script>alert(1)</script>", Timestamp: "20250506070802", HopPath: "L", Via: "http://a.test/", Source: "http://a.test/"},
			Score: 0.6, Severity: Moderate, Resources: f(0.6), Outcomes: map[string]int{"answered": 3, "missing": 2}, Requested: 5,
			Missing: []string{"http://a.test/data.json", "http://a.test/lazy.png"}},
		{Page: Page{URL: "http://a.test/hang", Timestamp: "20250506070803", Source: "http://a.test/"}, Score: 0, Severity: Severe,
			Error: "never finished loading", Outcomes: map[string]int{"answered": 1, "broken": 1}, Requested: 2, Missing: []string{"http://a.test/data.json"},
			Broken: []replay.Exchange{{URL: "http://a.test/cut", Outcome: replay.Broken, Error: "WARC record truncated"}}},
	}
}

// Worst pages first, with the sums; the HTML page escapes what it shows
// and needs nothing from outside; both files land in the directory.
func TestReport(t *testing.T) {
	r := NewReport(sampleResults(), []LineError{{File: "crawl.log", Line: 3, Reason: "bad"}}, time.Unix(0, 0))
	if r.Results[0].URL != "http://a.test/hang" || r.Results[2].URL != "http://a.test/" {
		t.Errorf("order %s, %s, %s: want worst first", r.Results[0].URL, r.Results[1].URL, r.Results[2].URL)
	}
	if r.Pages != 3 || r.Errors != 1 || r.Missing != 2 || r.BySeverity["good"] != 1 || r.BySeverity["severe"] != 1 ||
		r.Requests["answered"] != 7 || r.Requests["missing"] != 2 || len(r.BadLines) != 1 || r.MeanScore != 1.6/3 {
		t.Errorf("sums: %s, bad lines %v", r.Summary(), r.BadLines)
	}
	page, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	if strings.Contains(s, "<script>alert") || !strings.Contains(s, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the page's URL is not escaped in the HTML report")
	}
	for _, want := range []string{"http://a.test/lazy.png", "WARC record truncated", "never finished loading", "crawl.log:3: bad"} {
		if !strings.Contains(s, want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "src=\"http", "href=\"http", "@import"} {
		if strings.Contains(s, bad) {
			t.Errorf("HTML report is not self-contained: it has %q", bad)
		}
	}
	dir := filepath.Join(t.TempDir(), "launch")
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ReportJSON))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || back.Missing != 2 || len(back.Results) != 3 {
		t.Errorf("JSON report read back: %v, %+v", err, back)
	}
	if _, err := os.Stat(filepath.Join(dir, ReportHTML)); err != nil {
		t.Error(err)
	}
}

// Missing URLs become launches as embeds of their page (hop E, via it, its
// source and the launch id inherited), each once, within both bounds,
// worst page first; URLs no crawl could fetch are dropped, and the page
// itself is not an embed of itself.
func TestPatchLaunches(t *testing.T) {
	res := sampleResults()
	res[1].Missing = append(res[1].Missing, "http://a.test/x1", "http://a.test/x2", "not a url", res[1].URL)
	r := NewReport(res, nil, time.Unix(0, 0))
	now := time.Date(2025, 5, 7, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		b       PatchBounds
		want    []string
		dropped int
	}{
		{"unbounded", PatchBounds{LaunchID: "20250506070000"},
			[]string{"http://a.test/data.json", "http://a.test/lazy.png", "http://a.test/x1", "http://a.test/x2"}, 1},
		{"per page", PatchBounds{PerPage: 1}, []string{"http://a.test/data.json", "http://a.test/lazy.png"}, 3},
		{"per launch", PatchBounds{PerLaunch: 2}, []string{"http://a.test/data.json", "http://a.test/lazy.png"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PatchLaunches(r, tc.b, now)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range p.Launches {
				got = append(got, l.URL)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") || p.Dropped != tc.dropped {
				t.Errorf("launches %v dropped %d, want %v dropped %d", got, p.Dropped, tc.want, tc.dropped)
			}
		})
	}
	p, _ := PatchLaunches(r, PatchBounds{LaunchID: "20250506070000"}, now)
	// data.json is first missed by the page that never loaded (a seed),
	// lazy.png by p<script>... (hop L).
	l := p.Launches[1]
	if l.Hop != "E" || l.ParentURL != res[1].URL || l.HopPath() != "LE" || l.ParentURLMetadata.HeritableData.Source != "http://a.test/" ||
		l.LaunchID() != "20250506070000" || l.ForceFetch {
		t.Errorf("patch launch %+v: want hop E via the page, path LE, source and launch id inherited, not forced", l)
	}
	if _, err := messages.AppendLaunch(nil, l); err != nil {
		t.Errorf("patch launch does not encode: %v", err)
	}
}

// The patch's launches reach the topic, keyed by host, decodable, and are
// counted with what the bounds dropped.
func TestPublishPatch(t *testing.T) {
	kc, cl := embeddedtest.Kafka(t, 1)
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PatchLaunches(NewReport(sampleResults(), nil, time.Unix(0, 0)), PatchBounds{PerLaunch: 1}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := Publish(context.Background(), cl, "fc.tocrawl.npld", p, m); err != nil {
		t.Fatal(err)
	}
	rd, err := kafka.NewClient(kc, kgo.ConsumeTopics("fc.tocrawl.npld"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < len(p.Launches) && time.Now().Before(deadline) {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		rd.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			l, err := messages.DecodeLaunch(r.Value)
			if err != nil {
				t.Errorf("record %q: %v", r.Value, err)
				return
			}
			if key, _ := hostkey.ForURL(l.URL); string(r.Key) != key {
				t.Errorf("%s keyed %q, want its host", l.URL, r.Key)
			}
			got = append(got, l.URL)
		})
		cancel()
	}
	if strings.Join(got, " ") != "http://a.test/data.json" {
		t.Errorf("on the topic: %v", got)
	}
	if s, d := testutil.ToFloat64(m.patched), testutil.ToFloat64(m.dropped); s != 1 || d != 1 {
		t.Errorf("counted %v sent, %v dropped; want 1 and 1", s, d)
	}
}
