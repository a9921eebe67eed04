package qa

import (
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // WARC digests are SHA-1
	"encoding/base32"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trawler-crawl/trawler/pkg/browser"
	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/mitm"
	"github.com/trawler-crawl/trawler/pkg/replay"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

var captureTime = time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)

const captureTS = "20250506070809"

// archive writes captures (URL → raw HTTP response) and resources (URL →
// content type and block) to one WARC, indexes it with extra lines, and
// returns a resolver over it.
func archive(t *testing.T, captures map[string]string, resources map[string][2]string, extra ...cdx.Line) *replay.Resolver {
	t.Helper()
	dir := t.TempDir()
	w, err := warcwriter.New(warcwriter.Config{Dir: dir, Prefix: "QA", Name: "QA-0.warc.gz", Hostname: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for u, raw := range captures {
		if _, err := w.WriteCapture(ctx, warcwriter.Capture{URL: u, Date: captureTime, Request: []byte("GET / HTTP/1.1\r\n\r\n"),
			Response: strings.NewReader(raw), ResponseLength: int64(len(raw)), PayloadDigest: digestOf(raw)}); err != nil {
			t.Fatal(err)
		}
	}
	for u, r := range resources {
		if _, err := w.WriteResource(ctx, warcwriter.Resource{URL: u, Date: captureTime, ContentType: r[0], Block: []byte(r[1])}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := extra
	if _, err := warcindex.IndexFile(ctx, filepath.Join(dir, "QA-0.warc.gz"), func(l cdx.Line) error {
		lines = append(lines, l)
		return nil
	}, func(e *warcindex.RecordError) { t.Errorf("index: %v", e) }); err != nil {
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
	r, err := replay.New(replay.Options{Index: replay.NewCDXIndex(ix, "fc"), Records: replay.NewDirs(dir)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// digestOf is the SHA-1 of the response's payload, in WARC's form.
func digestOf(raw string) string {
	_, body, _ := strings.Cut(raw, "\r\n\r\n")
	sum := sha1.Sum([]byte(body)) //nolint:gosec // WARC digests are SHA-1
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

func htmlResponse(body string) string {
	return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

func blackPNG(t *testing.T) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 320, 240))
	for i := range img.Pix {
		img.Pix[i] = 0
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	img.Set(0, 0, color.White)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func needChromium(t *testing.T) {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if _, err := exec.LookPath(name); err == nil {
			return
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true: no Chromium")
	}
	t.Skip("no Chromium installed")
}

// Each page is scored from what its replay asked the archive; a resource
// whose WARC file is gone is broken, one never captured is missing; an
// https page replays through the intercepting proxy, and a captured
// redirect leads there; a capture-time
// screenshot unlike the replay lowers the score; a page that never
// finishes loading is reported severe with why, and the others are
// checked all the same. Everything is counted in the metrics.
func TestCheckerScoresAndBadInput(t *testing.T) {
	needChromium(t)
	page := `<!DOCTYPE html><html><head><title>Home</title><link rel="stylesheet" href="/s.css"></head>
<body style="background:#fff"><h1>Home page</h1><p>Some text.</p><img src="/i.png" width="5" height="5"><script src="/missing.js"></script></body></html>`
	r := archive(t, map[string]string{
		"http://qa.test/":      htmlResponse(page),
		"http://qa.test/s.css": "HTTP/1.1 200 OK\r\nContent-Type: text/css\r\nContent-Length: 10\r\n\r\nh1{margin}",
		"http://qa.test/hang":  htmlResponse(`<!DOCTYPE html><html><body><p>spin</p><script>for(;;){}</script></body></html>`),
		"https://secure.test/": htmlResponse(`<!DOCTYPE html><html><body><p>secure</p></body></html>`),
		"http://qa.test/old":   "HTTP/1.1 301 Moved Permanently\r\nLocation: https://secure.test/\r\nContent-Length: 0\r\n\r\n",
	}, map[string][2]string{
		"screenshot:http://qa.test/": {"image/png", blackPNG(t)},
		"onreadydom:http://qa.test/": {"text/html", page},
	}, cdx.Line{URLKey: "test,qa)/i.png", Timestamp: captureTS, Original: "http://qa.test/i.png", Mimetype: "image/png",
		Status: "200", Digest: "D", Length: 100, Offset: 0, Filename: "GONE.warc.gz"})
	ca, err := mitm.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := browser.New(context.Background(), browser.Config{Tabs: 2, PageTimeout: 30 * time.Second,
		SPKIHashes: []string{ca.SPKIHash()}, NoSandbox: true, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Close() })
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChecker(Options{Resolver: r, Browser: pool, CA: ca, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	pages := []Page{{URL: "http://qa.test/", Timestamp: captureTS}, {URL: "http://qa.test/hang", Timestamp: captureTS},
		{URL: "https://secure.test/", Timestamp: captureTS}, {URL: "http://qa.test/never-captured", Timestamp: captureTS},
		{URL: "http://qa.test/old", Timestamp: captureTS}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res := ch.Run(ctx, pages, 2)
	for _, p := range res {
		t.Logf("%s: %s %.3f resources %v screenshot %v text %v outcomes %v missing %v broken %d error %q",
			p.URL, p.Severity, p.Score, deref(p.Resources), deref(p.Screenshot), deref(p.Text), p.Outcomes, p.Missing, len(p.Broken), p.Error)
	}
	home, hang, secure, never, moved := res[0], res[1], res[2], res[3], res[4]
	if !slices.Contains(home.Missing, "http://qa.test/missing.js") || len(home.Broken) != 1 ||
		!strings.Contains(home.Broken[0].Error, "WARC file not found") || home.Outcomes["answered"] < 2 {
		t.Errorf("home: missing %v, broken %+v, outcomes %v: want missing.js missing, i.png broken by its lost file", home.Missing, home.Broken, home.Outcomes)
	}
	if home.Screenshot == nil || *home.Screenshot > 0.5 || home.Text == nil || *home.Text != 1 || home.Severity != Severe {
		t.Errorf("home: screenshot %v text %v severity %s: want a low screenshot match (black capture), text 1, severe",
			deref(home.Screenshot), deref(home.Text), home.Severity)
	}
	if hang.Error == "" || hang.Severity != Severe || hang.Score != 0 {
		t.Errorf("hanging page: error %q severity %s score %v: want it reported severe with why", hang.Error, hang.Severity, hang.Score)
	}
	if secure.Error != "" || secure.Severity != Good || secure.Outcomes["answered"] < 1 {
		t.Errorf("https page: %+v: want it answered through the proxy and good", secure)
	}
	if never.Outcomes["offsite"]+never.Outcomes["missing"] == 0 || never.Resources == nil || *never.Resources != 0 {
		t.Errorf("page never captured: outcomes %v resources %v: want it missing, scored 0", never.Outcomes, deref(never.Resources))
	}
	if moved.FinalURL != "https://secure.test/" || moved.Outcomes["answered"] < 2 || moved.Severity != Good {
		t.Errorf("redirect: ended at %q, outcomes %v, %s: want the captured 301 replayed and followed to the https page",
			moved.FinalURL, moved.Outcomes, moved.Severity)
	}
	if got := testutil.ToFloat64(m.errors); got < 1 {
		t.Errorf("trawler_qa_page_errors_total %v, want at least 1", got)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("broken")); got < 1 {
		t.Errorf("trawler_qa_requests_total{outcome=broken} %v, want at least 1", got)
	}
}

func deref(f *float64) any {
	if f == nil {
		return "none"
	}
	return *f
}
