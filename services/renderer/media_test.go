package renderer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/internal/mediafixture"
	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/replay"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
)

// mediaPages serves the media fixture (with Range support, as media
// servers have) and pages that play it.
type mediaPages struct {
	base   string
	fx     mediafixture.Files
	mu     sync.Mutex
	hits   map[string]int
	ranges int // requests with a Range header
}

func (m *mediaPages) ranged() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ranges
}

func (m *mediaPages) hit(p string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits[p]
}

func startMediaPages(t *testing.T) *mediaPages {
	t.Helper()
	fx, err := mediafixture.Make(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := &mediaPages{fx: fx, hits: map[string]int{}}
	pages := map[string]string{
		// The video has no source until it plays.
		"/onplay.html": `<html><body><video id="v" preload="none" muted width="160" height="120"></video>
<script>const v = document.getElementById("v");
v.addEventListener("play", () => { if (!v.getAttribute("src")) { v.src = "/progressive.mp4"; v.play().catch(() => {}); } });</script></body></html>`,
		"/hls.html": `<html><body><video src="/hls/master.m3u8" width="160" height="120"></video><a href="/next">next</a></body></html>`,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.base = "http://" + ln.Addr().String()
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.hits[r.URL.Path]++
		if r.Header.Get("Range") != "" {
			m.ranges++
		}
		m.mu.Unlock()
		if html, ok := pages[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, html)
			return
		}
		f, err := os.Open(filepath.Join(fx.Dir, filepath.FromSlash(path.Clean(r.URL.Path))))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer func() { _ = f.Close() }()
		w.Header().Set("Content-Type", mediafixture.ContentType(r.URL.Path))
		http.ServeContent(w, r, r.URL.Path, time.Time{}, f)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return m
}

// allEvents keeps every event of each URL, in order.
func allEvents(t *testing.T, recs []*kgo.Record) map[string][]messages.Crawled {
	t.Helper()
	out := map[string][]messages.Crawled{}
	for _, r := range recs {
		ev, err := messages.DecodeCrawled(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		out[ev.URL] = append(out[ev.URL], ev)
	}
	return out
}

func has200(evs []messages.Crawled) bool {
	for _, ev := range evs {
		if ev.StatusCode == 200 && ev.WarcFilename != nil {
			return true
		}
	}
	return false
}

// A video that gets its source only when it plays is captured because
// the renderer starts it; the browser asks for it by Range, and the
// renderer fetches and records it whole, so the archive has the 200 that
// replay needs and no 206. With render.media.play off the same page never
// loads it.
func TestMediaStartsOnPlay(t *testing.T) {
	m := startMediaPages(t)
	for _, play := range []bool{true, false} {
		name := map[bool]string{true: "play", false: "no play"}[play]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			p := testProfile()
			p.Render.Media.Play = play
			p.Render.Media.YtDlp = profile.YtDlpOff
			before := m.hit("/progressive.mp4")
			r, stop := e.start(t, Config{}, p)
			page := m.base + "/onplay.html"
			e.handOff(t, page)
			evs := allEvents(t, e.readTopic(t, "fc.crawled", hasURL("onreadydom:"+page)))
			stop()
			video := evs[m.base+"/progressive.mp4"]
			if !play {
				if len(video) != 0 || m.hit("/progressive.mp4") != before {
					t.Fatalf("without play the video was loaded: %d events", len(video))
				}
				return
			}
			if len(video) == 0 {
				t.Fatal("progressive.mp4 not captured")
			}
			for _, ev := range video {
				if ev.StatusCode != 200 || ev.WarcFilename == nil {
					t.Errorf("progressive.mp4: a capture with status %d, want only whole (200) captures", ev.StatusCode)
				}
			}
			if n := m.ranged(); n != 0 {
				t.Errorf("the site got %d Range requests; the renderer should fetch media whole", n)
			}
			widened := testutil.ToFloat64(r.metrics.media.widened)
			if widened < 1 {
				t.Errorf("no browser Range request was widened (%v); the test no longer exercises it", widened)
			}
			t.Logf("progressive.mp4: %d captures; %v browser Range requests fetched whole", len(video), widened)
			replaysWhole(t, filepath.Join(e.dir, "warcs", "fc-npld-render"), m.base+"/progressive.mp4", video,
				filepath.Join(m.fx.Dir, m.fx.Progressive))
		})
	}
}

// yt-dlp runs on a page a sheet marks, through the page's
// recording proxy: the stream it chooses is captured segment by segment
// as ordinary 200 captures of the renderer, and its JSON description is
// the metadata record youtube-dl:<page>.
func TestYtDlpThroughTheProxy(t *testing.T) {
	if _, err := exec.LookPath("yt-dlp"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: no yt-dlp (scripts/install-test-deps.sh installs it)")
		}
		t.Skip("no yt-dlp installed")
	}
	m := startMediaPages(t)
	e := newEnv(t)
	// yt-dlp is off for the crawl and on for the pages a sheet marks.
	p := testProfile()
	p.Render.Media.YtDlp = profile.YtDlpOff
	sheet := "sheets:\n  definitions:\n    media: {render.media.ytDlp: always}\n  associations:\n" +
		"    - surtPrefixes: ['" + m.base + "/hls']\n      sheets: [media]\n"
	if err := profile.Decode(strings.NewReader(sheet), &p); err != nil {
		t.Fatal(err)
	}
	r, stop := e.start(t, Config{}, p)
	page := m.base + "/hls.html"
	e.handOff(t, page)
	e.wait = 3 * time.Minute
	e.readTopic(t, "fc.tocrawl.npld", hasURL(m.base+"/next"))
	evs := allEvents(t, e.all(t, "fc.crawled"))
	stop()
	// yt-dlp takes the best rendition: the high variant, every segment.
	for _, f := range m.fx.HLS["v0"] {
		if !has200(evs[m.base+"/"+f]) {
			t.Errorf("%s: no 200 capture through the proxy (events %+v)", f, evs[m.base+"/"+f])
		}
	}
	if n := testutil.ToFloat64(r.metrics.media.runs.WithLabelValues("ok")); n != 1 {
		t.Errorf("yt-dlp runs ok = %v, want 1", n)
	}
	info := findMetadata(t, filepath.Join(e.dir, "warcs", "fc-npld-render"), "youtube-dl:"+page)
	var desc struct {
		Formats []struct {
			URL string `json:"url"`
		} `json:"formats"`
		Entries []json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(info, &desc); err != nil {
		t.Fatalf("youtube-dl record is not JSON: %v\n%.300s", err, info)
	}
	if len(desc.Formats) == 0 && len(desc.Entries) == 0 {
		t.Errorf("youtube-dl record names no formats or entries: %.300s", info)
	}
}

// findMetadata returns the block of the metadata record of target in the
// WARCs of dir, failing the test if there is none.
func findMetadata(t *testing.T, dir, target string) []byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	for _, f := range files {
		rd, err := gowarc.NewWarcFileReader(f, 0, gowarc.WithStrictValidation())
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, _, _, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if rec.Type() == gowarc.Metadata && rec.WarcHeader().Get(gowarc.WarcTargetURI) == target {
				if ct := rec.WarcHeader().Get(gowarc.ContentType); !strings.HasPrefix(ct, "application/vnd.youtube-dl_formats+json") {
					t.Errorf("%s: Content-Type %q", target, ct)
				}
				raw, _ := rec.Block().RawBytes()
				b, _ := io.ReadAll(raw)
				_ = rd.Close()
				return b
			}
			_ = rec.Close()
		}
		_ = rd.Close()
	}
	t.Fatalf("no metadata record %s in %s", target, dir)
	return nil
}

// Without yt-dlp the renderer says so once, counts the pages that would
// have run it, and renders them as always.
func TestNoYtDlp(t *testing.T) {
	m := startMediaPages(t)
	e := newEnv(t)
	p := testProfile()
	p.Render.Media.YtDlp = profile.YtDlpAlways
	var logs bytes.Buffer
	var mu sync.Mutex
	cfg := Config{Crawl: "fc", Stream: "npld", ID: "r0", DataDir: e.dir, Tabs: 2, PageTimeout: 20 * time.Second, Attempts: 2,
		NoSandbox: true, YtDlp: filepath.Join(t.TempDir(), "no-such-yt-dlp")}
	r, err := New(cfg, Deps{Profile: p, Kafka: e.kc, Redis: e.rdb, Registerer: prometheus.NewRegistry(), Version: "t",
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	e.handOff(t, m.base+"/hls.html", m.base+"/onplay.html")
	e.readTopic(t, "fc.crawled", hasURLs("onreadydom:"+m.base+"/hls.html", "onreadydom:"+m.base+"/onplay.html"))
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	mu.Lock()
	n := strings.Count(logs.String(), "yt-dlp not found")
	mu.Unlock()
	if n != 1 {
		t.Errorf("said %d times that yt-dlp is missing, want once", n)
	}
	if v := testutil.ToFloat64(r.metrics.media.available); v != 0 {
		t.Errorf("trawler_renderer_ytdlp_available = %v", v)
	}
	if v := testutil.ToFloat64(r.metrics.media.runs.WithLabelValues("not_installed")); v != 2 {
		t.Errorf("runs not_installed = %v, want 2", v)
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// replaysWhole indexes the WARCs of dir as the CDX writer would and
// replays url at the time of its 200 capture by pywb's rules
// (pkg/replay): the whole file comes back, as a player asks for it.
func replaysWhole(t *testing.T, dir, url string, evs []messages.Crawled, file string) {
	t.Helper()
	ctx := context.Background()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	var lines []cdx.Line
	if _, err := warcindex.IndexFiles(ctx, paths, func(l cdx.Line) error { lines = append(lines, l); return nil },
		warcindex.FilesOptions{}); err != nil {
		t.Fatal(err)
	}
	ix, err := cdxindex.Open(t.TempDir(), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	if err := ix.Put(ctx, "fc", lines); err != nil {
		t.Fatal(err)
	}
	rs, err := replay.New(replay.Options{Index: replay.NewCDXIndex(ix, "fc"), Records: replay.NewDirs(dir)})
	if err != nil {
		t.Fatal(err)
	}
	var at string
	for _, ev := range evs {
		if ev.StatusCode == 200 {
			at = strings.NewReplacer("-", "", "T", "", ":", "").Replace(ev.Timestamp)[:14]
		}
	}
	resp, err := rs.Resolve(ctx, url, at)
	if err != nil {
		t.Fatalf("replay %s at %s: %v", url, at, err)
	}
	defer func() { _ = resp.Body.Close() }()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !bytes.Equal(got, want) {
		t.Fatalf("replay of %s: status %d, %d bytes; want 200 with the file's %d bytes", url, resp.StatusCode, len(got), len(want))
	}
}
