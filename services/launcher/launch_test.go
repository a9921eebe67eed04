package launcher

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// goldenLines returns the lines of testdata/launch-messages.jsonl.
func goldenLines(t *testing.T) [][]byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "launch-messages.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	var out [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, slices.Clone(sc.Bytes()))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// decodeWire decodes a launch message as a worker does.
func decodeWire(t *testing.T, b []byte) messages.Launch {
	t.Helper()
	l, err := messages.DecodeLaunch(b)
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return l
}

// The launches built for the golden feed's targets are, on the wire, the
// golden launch messages UKWA's launcher wrote: every field, the legacy
// launch_ts key included; the timestamps are the same instant.
func TestBuildLaunchesGolden(t *testing.T) {
	targets, _ := readTestFeed(t, "crawl-feed-npld.jsonl")
	golden := goldenLines(t)
	tests := []struct {
		id     int64
		at     time.Time
		sent   time.Duration // after at
		golden []byte
		seeds  int
	}{
		{1001, time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC), 1234567 * time.Microsecond, golden[0], 1},
		{1002, time.Date(2024, 1, 17, 14, 0, 0, 0, time.UTC), 500 * time.Millisecond, golden[1], 2},
	}
	for _, tc := range tests {
		got, err := BuildLaunches(targetByID(t, targets, tc.id), tc.at, LaunchOptions{SentAt: tc.at.Add(tc.sent)})
		if err != nil {
			t.Fatalf("target %d: %v", tc.id, err)
		}
		if len(got) != tc.seeds {
			t.Fatalf("target %d: %d launches, want %d", tc.id, len(got), tc.seeds)
		}
		wire, err := encodeLaunch(got[0])
		if err != nil {
			t.Fatal(err)
		}
		g, w := decodeWire(t, wire), decodeWire(t, tc.golden)
		gt, err1 := g.Time()
		wt, err2 := w.Time()
		if err1 != nil || err2 != nil || !gt.Equal(wt) || strings.HasSuffix(g.Timestamp, "Z") {
			t.Errorf("target %d: timestamp %q, want the instant of %q (%v %v)", tc.id, g.Timestamp, w.Timestamp, err1, err2)
		}
		g.Timestamp, w.Timestamp = "", ""
		if !reflect.DeepEqual(g, w) {
			t.Errorf("target %d:\n got %s\nwant %s", tc.id, wire, tc.golden)
		}
	}
}

func TestBuildLaunchesFields(t *testing.T) {
	tg := Target{ID: 77, Seeds: []string{"https://a.example/?q=1&r=2", "http://b.example/"}}
	at := time.Date(2024, 7, 1, 10, 0, 0, 0, time.FixedZone("BST", 3600))
	got, err := BuildLaunches(tg, at, LaunchOptions{RefreshDepth: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range got {
		h := l.ParentURLMetadata.HeritableData
		if l.URL != tg.Seeds[i] || l.ParentURL != l.URL || l.Method != "GET" || !l.IsSeed || !l.ForceFetch || l.Hop != "" ||
			l.ParentURLMetadata.PathFromSeed != "" || h.Source != "tid:77:"+tg.Seeds[0] || *h.RefreshDepth != 3 ||
			h.LaunchTimestamp != "20240701090000" || l.Timestamp != "2024-07-01T09:00:00.000000" ||
			!slices.Equal(h.Annotations, []string{"resetQuotas", "launchTimestamp:20240701090000"}) ||
			!slices.Equal(h.Heritable, []string{"source", "heritable", "refreshDepth"}) || len(l.Sheets) != 0 {
			t.Errorf("launch %d = %+v", i, l)
		}
	}
	// Messages share no slices or maps, so changing one leaves the other.
	got[0].ParentURLMetadata.HeritableData.Annotations[0] = "changed"
	*got[0].ParentURLMetadata.HeritableData.RefreshDepth = 9
	if got[1].ParentURLMetadata.HeritableData.Annotations[0] != "resetQuotas" || *got[1].ParentURLMetadata.HeritableData.RefreshDepth != 3 {
		t.Error("launches share state")
	}
	js, err := encodeLaunch(got[0])
	if err != nil || !strings.Contains(string(js), `"url":"https://a.example/?q=1&r=2"`) || !strings.HasSuffix(string(js), "}\n") {
		t.Errorf("encoded %s, %v", js, err)
	}
}

func TestBuildLaunchesSheets(t *testing.T) {
	tests := []struct {
		robots bool
		scope  Scope
		depth  Depth
		want   []string
	}{
		{false, ScopeRoot, DepthCapped, []string{}},
		{true, ScopeRoot, DepthCapped, []string{"ignoreRobots"}},
		{false, ScopeSubdomains, DepthCapped, []string{"subdomainsScope"}},
		{false, ScopePlus1, DepthCapped, []string{"plus1Scope"}},
		{false, ScopeResource, DepthCapped, []string{"resourceScope"}},
		{false, ScopeRoot, DepthCappedLarge, []string{"higherLimit"}},
		{false, ScopeRoot, DepthDeep, []string{"noLimit"}},
		{true, ScopePlus1, DepthDeep, []string{"ignoreRobots", "plus1Scope", "noLimit"}},
		{true, ScopeSubdomains, DepthCappedLarge, []string{"ignoreRobots", "subdomainsScope", "higherLimit"}},
	}
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range tests {
		tg := Target{ID: 1, Seeds: []string{"https://a.example/"}, IgnoreRobotsTxt: tc.robots, Scope: tc.scope, Depth: tc.depth}
		got, err := BuildLaunches(tg, at, LaunchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[0].Sheets, tc.want) {
			t.Errorf("robots %v scope %s depth %s: sheets %v, want %v", tc.robots, tc.scope, tc.depth, got[0].Sheets, tc.want)
		}
	}
}

func TestBuildLaunchesRender(t *testing.T) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		tg     Target
		opts   LaunchOptions
		render bool
	}{
		{"plain", Target{ID: 5}, LaunchOptions{}, false},
		{"feed field", Target{ID: 5, WebRender: true}, LaunchOptions{}, true},
		{"option", Target{ID: 5}, LaunchOptions{RenderTargets: map[int64]bool{5: true}}, true},
		{"option for another target", Target{ID: 5}, LaunchOptions{RenderTargets: map[int64]bool{6: true}}, false},
	}
	for _, tc := range tests {
		tc.tg.Seeds = []string{"https://a.example/"}
		got, err := BuildLaunches(tc.tg, at, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		ann := got[0].ParentURLMetadata.HeritableData.Annotations
		if slices.Contains(ann, AnnotationWebRenderThis) != tc.render || !slices.Contains(ann, AnnotationResetQuotas) {
			t.Errorf("%s: annotations %v, render %v", tc.name, ann, tc.render)
		}
	}
}

func TestBuildLaunchesErrors(t *testing.T) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		tg   Target
		at   time.Time
		opts LaunchOptions
		want string
	}{
		{"no seeds", Target{ID: 3}, at, LaunchOptions{}, "target 3: no seeds"},
		{"bad seed", Target{ID: 3, Seeds: []string{"https://ok.example/", "file:///etc/passwd"}}, at, LaunchOptions{}, `target 3: "file:///etc/passwd" is not an http(s) URL`},
		{"no time", Target{ID: 3, Seeds: []string{"https://ok.example/"}}, time.Time{}, LaunchOptions{}, "target 3: no launch time"},
		{"negative refresh", Target{ID: 3, Seeds: []string{"https://ok.example/"}}, at, LaunchOptions{RefreshDepth: -1}, "negative refresh depth -1"},
	}
	for _, tc := range tests {
		_, err := BuildLaunches(tc.tg, tc.at, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestSeedLaunch(t *testing.T) {
	sent := time.Date(2024, 3, 1, 12, 0, 0, 0, time.FixedZone("x", 3600))
	l := SeedLaunch("https://a.example/", "https://a.example/", nil, false, sent)
	wire, err := encodeLaunch(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"url":"https://a.example/","method":"GET","isSeed":true,"forceFetch":false,"hop":"","parentUrl":"https://a.example/",` +
		`"parentUrlMetadata":{"pathFromSeed":"","heritableData":{"heritable":["source","heritable"],"source":"https://a.example/"}},` +
		`"headers":{},"sheets":[],"timestamp":"2024-03-01T11:00:00.000000"}` + "\n"
	if string(wire) != want {
		t.Errorf("got  %s\nwant %s", wire, want)
	}
	l = SeedLaunch("https://b.example/x", "tid:9:https://b.example/", []string{"ignoreRobots"}, true, sent)
	d := decodeWire(t, mustEncode(t, l))
	if !d.IsSeed || d.ForceFetch || d.Source() != "tid:9:https://b.example/" || !slices.Equal(d.Sheets, []string{"ignoreRobots"}) ||
		!slices.Equal(d.Annotations(), []string{AnnotationWebRenderThis}) || d.LaunchTimestamp() != "" {
		t.Errorf("decoded %+v", d)
	}
}

func mustEncode(t *testing.T, l messages.Launch) []byte {
	t.Helper()
	b, err := encodeLaunch(l)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
