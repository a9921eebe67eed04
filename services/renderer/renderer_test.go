package renderer

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// site is the test web of a render: a page whose links exist only after
// its script runs, that loads data by fetch(), lazy-loads an image on
// scroll, embeds what robots.txt forbids, and asks for loopback and cloud
// metadata addresses the crawl must never reach.
type site struct {
	base string
	// forbidden counts connections to a loopback address outside the
	// allowed range: it must stay 0.
	forbidden atomic.Int64
	mu        sync.Mutex
	hits      map[string]int
	// hold delays the page's script, so a render can be caught midway.
	hold chan struct{}
}

func (s *site) hit(p string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[p]
}

func startSite(t *testing.T) *site {
	t.Helper()
	s := &site{hits: map[string]int{}}
	fl, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 on this machine: %v", err)
	}
	t.Cleanup(func() { _ = fl.Close() })
	go func() {
		for {
			c, err := fl.Accept()
			if err != nil {
				return
			}
			s.forbidden.Add(1)
			_ = c.Close()
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.base = "http://" + ln.Addr().String()
	var lazy bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	_ = png.Encode(&lazy, img)
	app := `var a=document.createElement('a');a.href='/js-only/1';a.textContent='js';document.getElementById('js').appendChild(a);
fetch('/api/data.json').then(function(r){return r.json()}).then(function(d){var b=document.createElement('a');b.href=d.next;b.textContent='n';document.body.appendChild(b);});
new IntersectionObserver(function(es){es.forEach(function(e){if(e.isIntersecting){e.target.src=e.target.dataset.src;}})}).observe(document.getElementById('lazy'));
fetch('http://` + fl.Addr().String() + `/steal').catch(function(){});
fetch('http://169.254.169.254/latest/meta-data/').catch(function(){});`
	page := `<!DOCTYPE html><html><head><title>Render test</title><link rel="stylesheet" href="/style.css"></head>
<body><h1>Hello</h1><a href="/static-link">static</a><div id="js"></div>
<div style="height:1500px"></div><img id="lazy" data-src="/img/lazy.png" width="10" height="10">
<img src="/private/secret.png"><script src="/app.js"></script></body></html>`
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		hold := s.hold
		s.mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		case "/", "/page2":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, page)
		case "/style.css":
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, "h1{color:#036}")
		case "/app.js":
			if hold != nil {
				select {
				case <-hold:
				case <-r.Context().Done():
					return
				}
			}
			w.Header().Set("Content-Type", "application/javascript")
			fmt.Fprint(w, app)
		case "/api/data.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"next":"/from-fetch"}`)
		case "/img/lazy.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(lazy.Bytes())
		case "/hang":
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

type env struct {
	kc  kafka.Config
	cl  *kgo.Client
	rdb *redis.Client
	dir string
	// wait bounds readTopic's wait; default 60 s.
	wait time.Duration
}

func newEnv(t testing.TB) *env {
	t.Helper()
	if _, err := exec.LookPath("chromium"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: no chromium (scripts/install-test-deps.sh installs it)")
		}
		t.Skip("no chromium installed")
	}
	kc, cl := embeddedtest.Kafka(t, 1)
	return &env{kc: kc, cl: cl, rdb: embeddedtest.Redis(t), dir: t.TempDir()}
}

func testProfile() profile.Profile {
	p := profile.Default()
	p.Fetch.AllowAddresses = []string{"127.0.0.1/32"}
	p.Render.HandOff = true
	p.Render.ScrollSteps = 2
	p.Robots.Policy = profile.RobotsObey
	return p
}

func (e *env) start(t testing.TB, cfg Config, p profile.Profile) (*Renderer, func()) {
	t.Helper()
	return e.startWith(t, cfg, p, nil)
}

// startWith runs a renderer resolving host names with res (nil: the
// system's).
func (e *env) startWith(t testing.TB, cfg Config, p profile.Profile, res fetch.Resolver) (*Renderer, func()) {
	t.Helper()
	if cfg.Crawl == "" {
		cfg = Config{Crawl: "fc", Stream: "npld", ID: "r0", DataDir: e.dir, Tabs: 2, PageTimeout: 20 * time.Second, Attempts: 2, NoSandbox: true}
	}
	var logOut io.Writer = io.Discard
	if os.Getenv("RENDER_TEST_LOG") != "" {
		logOut = os.Stderr
	}
	r, err := New(cfg, Deps{Profile: p, Kafka: e.kc, Redis: e.rdb, Resolver: res, Logger: slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registerer: prometheus.NewRegistry(), Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	}
	return r, stop
}

func (e *env) handOff(t testing.TB, urls ...string) {
	t.Helper()
	for _, u := range urls {
		l := messages.Launch{URL: u, Method: "GET", IsSeed: true, ParentURL: u,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:" + u}}}
		b, _ := json.Marshal(l)
		if err := e.cl.ProduceSync(context.Background(), &kgo.Record{Topic: "fc.torender.npld", Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// readTopic returns the records of topic, waiting up to 60 s until cond
// holds for them.
func (e *env) readTopic(t testing.TB, topic string, cond func([]*kgo.Record) bool) []*kgo.Record {
	t.Helper()
	deadline := time.Now().Add(cmp.Or(e.wait, 60*time.Second))
	for {
		recs := e.all(t, topic)
		if cond(recs) {
			return recs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: condition not met with %d records", topic, len(recs))
		}
		time.Sleep(100 * time.Millisecond) // polling a condition with a deadline
	}
}

func (e *env) all(t testing.TB, topic string) []*kgo.Record {
	t.Helper()
	cl, err := kafka.NewClient(e.kc, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	if err != nil {
		return nil
	}
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	var out []*kgo.Record
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for int64(len(out)) < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

func events(t *testing.T, recs []*kgo.Record) map[string]messages.Crawled {
	t.Helper()
	out := map[string]messages.Crawled{}
	for _, r := range recs {
		ev, err := messages.DecodeCrawled(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		out[ev.URL] = ev
	}
	return out
}

func hasURL(u string) func([]*kgo.Record) bool {
	return func(recs []*kgo.Record) bool {
		for _, r := range recs {
			if strings.Contains(string(r.Value), `"url":"`+u+`"`) {
				return true
			}
		}
		return false
	}
}

// hasURLs reports whether the records carry every one of the URLs.
func hasURLs(us ...string) func([]*kgo.Record) bool {
	return func(recs []*kgo.Record) bool {
		for _, u := range us {
			if !hasURL(u)(recs) {
				return false
			}
		}
		return true
	}
}

// A rendered page is archived as the browser saw it: the page, its
// stylesheet and script, the fetch() response and the image loaded on
// scroll, each with an event (hop E from the page), a screenshot of the
// viewport and the rendered DOM; its links, including those only script
// made, go to tocrawl; robots.txt and the address guard hold for every
// request the script makes; every record reads back strictly.
func TestRenderRecordsWhatTheBrowserLoads(t *testing.T) {
	s := startSite(t)
	e := newEnv(t)
	r, stop := e.start(t, Config{}, testProfile())
	e.handOff(t, s.base+"/")
	shot := "screenshot:" + s.base + "/"
	evs := events(t, e.readTopic(t, "fc.crawled", hasURL("onreadydom:"+s.base+"/")))
	// The outlinks are sent after the DOM's event, before the hand-off is
	// committed.
	e.readTopic(t, "fc.tocrawl.npld", hasURLs(s.base+"/static-link", s.base+"/js-only/1", s.base+"/from-fetch"))
	stop()
	for _, p := range []string{"/", "/style.css", "/app.js", "/api/data.json", "/img/lazy.png", "/robots.txt"} {
		ev, ok := evs[s.base+p]
		if !ok {
			t.Errorf("%s: no crawled event; have %v", p, keys(evs))
			continue
		}
		wantHop := "E"
		switch p {
		case "/":
			wantHop = ""
		case "/robots.txt":
			wantHop = "P"
		}
		if ev.StatusCode != 200 || ev.HopPath != wantHop || ev.WarcFilename == nil || !strings.Contains(*ev.WarcFilename, "-WEBRENDER-") {
			t.Errorf("%s: status %d hop %q warc %v", p, ev.StatusCode, ev.HopPath, ev.WarcFilename)
		}
		if p != "/" && ev.Via != s.base+"/" {
			t.Errorf("%s: via %q, want the page", p, ev.Via)
		}
	}
	if _, ok := evs[s.base+"/private/secret.png"]; ok || s.hit("/private/secret.png") != 0 {
		t.Error("robots.txt disallows /private/, but it was fetched")
	}
	if n := s.forbidden.Load(); n != 0 {
		t.Errorf("%d connections reached a forbidden loopback address", n)
	}
	if n := testutil.ToFloat64(r.metrics.refusals.WithLabelValues(refusedAddress)); n < 2 {
		t.Errorf("address refusals %v, want the loopback and metadata requests", n)
	}
	if ev, ok := evs[shot]; !ok || ev.Mimetype != "image/png" || ev.WarcType != "resource" {
		t.Errorf("screenshot event: %+v", ev)
	}
	var sent []string
	for _, rec := range e.all(t, "fc.tocrawl.npld") {
		l, err := messages.DecodeLaunch(rec.Value)
		if err != nil {
			t.Fatal(err)
		}
		if l.ParentURL != s.base+"/" || l.Hop != "L" {
			t.Errorf("outlink %s: parent %s hop %q", l.URL, l.ParentURL, l.Hop)
		}
		sent = append(sent, strings.TrimPrefix(l.URL, s.base))
	}
	for _, want := range []string{"/static-link", "/js-only/1", "/from-fetch"} {
		if !contains(sent, want) {
			t.Errorf("outlink %s not sent to tocrawl: %v", want, sent)
		}
	}
	checkWARCs(t, filepath.Join(e.dir, "warcs", "fc-npld-render"), shot)
}

func keys(m map[string]messages.Crawled) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkWARCs reads every record of every closed WARC in dir with strict
// validation and checks the screenshot decodes as a PNG of the viewport.
func checkWARCs(t *testing.T, dir, shot string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no WARCs in %s: %v", dir, err)
	}
	if open, _ := filepath.Glob(filepath.Join(dir, "*.open")); len(open) > 0 {
		t.Errorf("open WARCs left: %v", open)
	}
	var sawShot, sawFetch bool
	for _, f := range files {
		rd, err := gowarc.NewWarcFileReader(f, 0, gowarc.WithStrictValidation(), gowarc.WithBlockErrorPolicy(gowarc.ErrFail))
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, off, v, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s at %d: %v", filepath.Base(f), off, err)
			}
			if v != nil && !v.Valid() {
				t.Errorf("%s at %d: %s record invalid: %v", filepath.Base(f), off, rec.Type(), v)
			}
			target := rec.WarcHeader().Get(gowarc.WarcTargetURI)
			raw, _ := rec.Block().RawBytes()
			block, _ := io.ReadAll(raw)
			switch {
			case rec.Type() == gowarc.Resource && target == shot:
				sawShot = true
				img, err := png.Decode(bytes.NewReader(block))
				if err != nil {
					t.Errorf("screenshot is not a PNG: %v", err)
				} else if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 960 {
					t.Errorf("screenshot %dx%d, want the 1280x960 viewport", b.Dx(), b.Dy())
				}
			case rec.Type() == gowarc.Response && strings.HasSuffix(target, "/api/data.json"):
				sawFetch = bytes.Contains(block, []byte(`"next":"/from-fetch"`))
				// The recording proxy speaks HTTP/1.1 (keep-alive) to the
				// plain-http test site and says so.
				if got := rec.WarcHeader().GetAll("WARC-Protocol"); len(got) != 1 || got[0] != "http/1.1" {
					t.Errorf("fetch() response record: WARC-Protocol %q, want [http/1.1]", got)
				}
			}
			_ = rec.Close()
		}
		_ = rd.Close()
	}
	if !sawShot || !sawFetch {
		t.Errorf("screenshot record %v, fetch() response record %v", sawShot, sawFetch)
	}
}
