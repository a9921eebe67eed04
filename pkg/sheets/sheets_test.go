package sheets

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// logBuffer is the shared concurrency-safe test log sink.
type logBuffer = testlog.Buffer

func testLogger() (*slog.Logger, *logBuffer) { return testlog.New(slog.LevelInfo) }

// decode reads a profile from YAML over the defaults.
func decode(t *testing.T, y string) profile.Profile {
	t.Helper()
	p := profile.Default()
	if err := profile.Decode(strings.NewReader(y), &p); err != nil {
		t.Fatalf("decode profile: %v", err)
	}
	return p
}

func newSheets(t *testing.T, y string) *Sheets {
	t.Helper()
	s, err := New(context.Background(), decode(t, y), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// orderProfile attaches sheets at nested, sibling and mid-segment prefixes.
const orderProfile = `
sheets:
  definitions:
    a: {politeness.minDelayMs: 1000, fetch.ignoreCookies: true}
    b: {politeness.minDelayMs: 2000}
    c: {politeness.minDelayMs: 4000, frontier.parallelQueues: 4}
    d: {queueAssignmentPolicy.parallelQueues: 8}
  associations:
    - surtPrefixes: ['http://(uk,co,', 'https://(UK,ORG,EXAMPLE,']
      sheets: [a]
    - surtPrefixes: ['http://(uk,co,bbc,']
      sheets: [c, b]
    - surtPrefixes: ['http://(uk,co,bbc,www,)/news/']
      sheets: [d]
    - surtPrefixes: ['http://(uk,co,bbc,']
      sheets: [d]
    - surtPrefixes: ['http://(com,galegroup,infotrac,)/itweb/blibrary', 'www.example.com/dir/page']
      sheets: [b]
`

func TestAssociationOrder(t *testing.T) {
	s := newSheets(t, orderProfile)
	tests := []struct {
		surt      string
		sheets    []string
		minDelay  int64
		parallel  int
		noCookies bool
	}{
		{"http://(org,example,www,)/", nil, 3000, 1, false},
		{"http://(uk,co,example,)/", []string{"a"}, 1000, 1, true},
		{"http://(uk,org,example,www,)/x", []string{"a"}, 1000, 1, true},
		// Shorter prefix first; at one prefix, file order; two
		// associations of the same prefix concatenate.
		{"http://(uk,co,bbc,www,)/", []string{"a", "c", "b", "d"}, 2000, 8, true},
		{"http://(uk,co,bbc,www,)/news/story", []string{"a", "c", "b", "d", "d"}, 2000, 8, true},
		// bbci is a sibling of bbc, not under it.
		{"http://(uk,co,bbci,)/", []string{"a"}, 1000, 1, true},
		{"http://(uk,co,bbc,www,)/new", []string{"a", "c", "b", "d"}, 2000, 8, true},
		// A prefix may end inside a path segment.
		{"http://(com,galegroup,infotrac,)/itweb/blibraryx", []string{"b"}, 2000, 1, false},
		{"http://(com,galegroup,infotrac,)/itweb/", nil, 3000, 1, false},
		// A URL in an association stands for its implied prefix.
		{"http://(com,example,www,)/dir/other", []string{"b"}, 2000, 1, false},
		{"http://(com,example,www,)/dirx", nil, 3000, 1, false},
		{"", nil, 3000, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.surt, func(t *testing.T) {
			e := s.For(tc.surt)
			if !slices.Equal(e.Sheets, tc.sheets) {
				t.Errorf("sheets = %q, want %q", e.Sheets, tc.sheets)
			}
			p := e.Profile
			if p.Politeness.MinDelayMs != tc.minDelay || p.Frontier.ParallelQueues != tc.parallel || p.Fetch.IgnoreCookies != tc.noCookies {
				t.Errorf("minDelayMs %d parallelQueues %d ignoreCookies %v, want %d %d %v",
					p.Politeness.MinDelayMs, p.Frontier.ParallelQueues, p.Fetch.IgnoreCookies, tc.minDelay, tc.parallel, tc.noCookies)
			}
			if !p.Sheets.IsZero() {
				t.Error("effective profile still carries the sheets section")
			}
			var names []string
			for _, a := range s.Explain(tc.surt) {
				names = append(names, a.Sheet)
				if !strings.HasPrefix(tc.surt, a.Prefix) {
					t.Errorf("explained prefix %q does not match %q", a.Prefix, tc.surt)
				}
			}
			if !slices.Equal(names, tc.sheets) {
				t.Errorf("Explain sheets = %q, want %q", names, tc.sheets)
			}
		})
	}
	// Identical combinations share one effective profile.
	if s.For("http://(uk,co,bbc,www,)/") != s.For("http://(uk,co,bbc,)/") {
		t.Error("same combination of sheets gave two effective profiles")
	}
}

func TestForURL(t *testing.T) {
	s := newSheets(t, orderProfile)
	tests := []struct {
		url    string
		sheets []string
	}{
		{"https://WWW.BBC.co.uk/news/x", []string{"a", "c", "b", "d", "d"}},
		{"http://user@bbc.co.uk:8080/", []string{"a", "c", "b", "d"}},
		{"http://xn--bcher-kva.co.uk/", []string{"a"}},
		{"http://bücher.co.uk/", []string{"a"}},
		{"http://example.org/", nil},
	}
	for _, tc := range tests {
		if got := s.ForURL(tc.url).Sheets; !slices.Equal(got, tc.sheets) {
			t.Errorf("ForURL(%s) sheets = %q, want %q", tc.url, got, tc.sheets)
		}
	}
}

// A sheet whose values make the combined settings invalid is skipped and
// explained; the others still apply.
func TestInvalidCombinationSkipped(t *testing.T) {
	log, buf := testLogger()
	p := decode(t, `
sheets:
  definitions:
    slowMin: {politeness.minDelayMs: 20000}
    fastMax: {politeness.maxDelayMs: 10000, fetch.ignoreCookies: true}
  associations:
    - {surtPrefixes: ['http://(org,example,'], sheets: [slowMin]}
    - {surtPrefixes: ['http://(org,example,www,'], sheets: [fastMax]}
`)
	s, err := New(context.Background(), p, Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	e := s.For("http://(org,example,www,)/")
	if !slices.Equal(e.Sheets, []string{"slowMin"}) || e.Profile.Politeness.MinDelayMs != 20000 || e.Profile.Fetch.IgnoreCookies {
		t.Fatalf("got %q %+v", e.Sheets, e.Profile.Politeness)
	}
	ex := s.Explain("http://(org,example,www,)/")
	if len(ex) != 2 || ex[1].Sheet != "fastMax" || !strings.Contains(ex[1].Skipped, "maxDelayMs (10000)") {
		t.Fatalf("explain = %+v", ex)
	}
	if !strings.Contains(buf.String(), "sheet=fastMax") {
		t.Errorf("skip not logged: %s", buf)
	}
}

func TestPrefix(t *testing.T) {
	tests := []struct{ in, want, wantErr string }{
		{in: "http://(uk,co,", want: "http://(uk,co,"},
		{in: "+http://(UK,Co,", want: "http://(uk,co,"},
		{in: "https://(uk,co,x,)/A", want: "http://(uk,co,x,)/a"},
		{in: "(uk,", want: "http://(uk,"},
		{in: "+uk", want: "http://(uk,"},
		{in: "www.example.org/main/sub", want: "http://(org,example,www,)/main/"},
		{in: "https://www.example.org/", want: "http://(org,example,www,)/"},
		{in: "http://example.org:8080", want: "http://(org,example,:8080"},
		{in: "  ", wantErr: "empty"},
		{in: "mailto:someone@example.org", wantErr: "neither a SURT prefix nor"},
	}
	for _, tc := range tests {
		got, err := Prefix(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Prefix(%q) = %q, %v; want error %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Prefix(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"sheet contradicts profile", "sheets:\n  definitions:\n    slow: {politeness.minDelayMs: 99999}\n",
			"sheet slow (profile, line 3) does not apply to this profile"},
		{"bad prefix", "sheets:\n  definitions:\n    a: {fetch.ignoreCookies: true}\n  associations:\n    - {surtPrefixes: ['mailto:x'], sheets: [a]}\n",
			"line 5: \"mailto:x\" is neither"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(context.Background(), decode(t, tc.yaml), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestNamesAndBase(t *testing.T) {
	s := newSheets(t, orderProfile)
	if got := s.Names(); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("names %q", got)
	}
	if !s.Has("a") || s.Has("zzz") {
		t.Fatal("Has")
	}
	if s.Base().Profile.Politeness.MinDelayMs != 3000 || len(s.Base().Sheets) != 0 {
		t.Fatal("base")
	}
	if err := s.Refresh(context.Background()); err != nil {
		t.Fatalf("refresh without redis: %v", err)
	}
	if _, err := s.Attach(context.Background(), "http://(uk,", []string{"a"}, nil); err != ErrNoRedis {
		t.Fatalf("attach without redis: %v", err)
	}
}

// A profile's own definition replaces an included sheet of the same name.
func TestOwnDefinitionReplacesIncluded(t *testing.T) {
	s := newSheets(t, `
sheets:
  include: [ukwa]
  definitions:
    extraPolite: {politeness.minDelayMs: 20000, politeness.maxDelayMs: 90000}
  associations:
    - {surtPrefixes: ['http://(uk,'], sheets: [extraPolite]}
`)
	p := s.For("http://(uk,co,x,)/").Profile.Politeness
	if p.MinDelayMs != 20000 || p.MaxDelayMs != 90000 || p.DelayFactor != 5 {
		t.Fatalf("politeness %+v", p)
	}
	if !s.Has("fast-2ps") {
		t.Fatal("included sheets lost")
	}
}
