package standalone

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
)

// consoleSite is a local site counting the requests it serves: its home
// page links to 600 pages /p/N and as many /ex/N, the pages an exclusion
// will stop, and to /hostile, titled with a script and linking to a URL
// with quotes.
type consoleSite struct {
	srv          *httptest.Server
	hits, exHits atomic.Int64
}

func startConsoleSite(t *testing.T) *consoleSite {
	t.Helper()
	s := &consoleSite{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		p := r.URL.Path
		if p == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if p == "/hostile" {
			fmt.Fprint(w, `<html><head><title><script>alert(1)</script></title></head><body>`+
				`<a href="/q&quot;uote&#39;&lt;script&gt;alert(1)&lt;/script&gt;.html">quotes</a></body></html>`)
			return
		}
		if strings.HasPrefix(p, "/ex/") {
			s.exHits.Add(1)
		}
		fmt.Fprint(w, `<html><head><title>a page</title></head><body>`)
		if p == "/" {
			// Wide rather than deep, so the hop limit never ends the crawl
			// during the test; /ex/ pages interleave with the others.
			fmt.Fprint(w, `<a href="/hostile">hostile</a> <a href="/q&quot;uote&#39;&lt;b&gt;.html">quotes</a>`)
			for i := range 600 {
				fmt.Fprintf(w, ` <a href="/p/%d">p</a> <a href="/ex/%d">ex</a>`, i, i)
			}
		}
		fmt.Fprint(w, `</body></html>`)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *consoleSite) host() string { return s.srv.Listener.Addr().String() }
func (s *consoleSite) seed() string { return s.srv.URL + "/" }

// browserErrors collects what the page reports wrong: console errors,
// uncaught exceptions, error log entries (CSP violations, failed loads)
// and dialogs (an alert would be an injected script running).
type browserErrors struct {
	mu   sync.Mutex
	list []string
}

func (b *browserErrors) add(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.list = append(b.list, s)
}

func (b *browserErrors) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.list...)
}

// startChromium starts headless Chromium for the test, failing on what
// the pages report wrong; it skips without Chromium (fails under CI).
func startChromium(t *testing.T) (context.Context, *browserErrors) {
	t.Helper()
	var execPath string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			execPath = p
			break
		}
	}
	if execPath == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: no Chromium in PATH (scripts/install-test-deps.sh installs chromium)")
		}
		t.Skip("no Chromium in PATH")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(execPath), chromedp.NoSandbox,
		chromedp.Flag("headless", "new"), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("user-data-dir", t.TempDir()), chromedp.WindowSize(1280, 900))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); acancel() })
	errs := &browserErrors{}
	listen := func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			errs.add(fmt.Sprintf("uncaught exception: %s at %s:%d", e.ExceptionDetails.Text, e.ExceptionDetails.URL, e.ExceptionDetails.LineNumber))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				errs.add("console." + string(e.Type) + ": " + strings.Join(args, " "))
			}
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				errs.add("log error: " + e.Entry.Text + " " + e.Entry.URL)
			}
		case *page.EventJavascriptDialogOpening:
			errs.add("dialog " + string(e.Type) + ": " + e.Message)
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}()
		}
	}
	// chromedp enables the Runtime and Log domains itself.
	if err := chromedp.Listen(ctx, listen); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx, errs
}

// artefactDir is where screenshots go: $TRAWLER_ARTEFACTS/console, else a
// temporary directory.
func artefactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TRAWLER_ARTEFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir = filepath.Join(dir, "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// consoleRun is a standalone crawl of two local sites with its console,
// driven by Chromium.
type consoleRun struct {
	t       *testing.T
	ctx     context.Context // the browser's
	errs    *browserErrors
	base    string
	shots   string
	a, b    *consoleSite
	dataDir string
}

// The acceptance test of the operator console: real Chromium through a
// running standalone crawl. It logs in, sees the overview's numbers change
// without a reload, opens the hosts, a host and a URL (with its replay
// link), pauses a host and sees no fetch of it afterwards, adds an
// exclusion and sees it take effect (no fetch under it, the URL page
// names it), resumes the host and sees it fetched again; each command
// shows its acknowledgement and who sent it. Every page is screenshot at
// 1280 px (the overview at 375 px too, where it must not scroll sideways),
// and any console error, uncaught exception or dialog fails the test: a
// crawled page titled with a script, linking to a URL with quotes, is in
// the crawl.
func TestConsoleInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a crawl and Chromium")
	}
	ctx, errs := startChromium(t)
	r := &consoleRun{t: t, ctx: ctx, errs: errs, shots: artefactDir(t), a: startConsoleSite(t), b: startConsoleSite(t)}
	token := r.startCrawl()
	t.Cleanup(func() {
		for _, e := range errs.all() {
			t.Errorf("browser: %s", e)
		}
	})

	// Log in; the overview's numbers change while it stays open.
	r.do(chromedp.Navigate(r.base + "/console/"))
	r.do(chromedp.WaitVisible(chromedp.CSS("#token")))
	r.shot("login")
	r.do(chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#login button")),
		chromedp.WaitVisible(chromedp.CSS("#numbers")))
	first := r.text("#uris")
	r.poll(time.Minute, func() string {
		if now := r.text("#uris"); now == first {
			return "finished URIs still " + now
		}
		if rate := r.text(`[data-rate="status.totals.uris"]`); rate == "–" {
			return "no URIs/s yet"
		}
		return ""
	})
	// The sparklines draw from the second rate on; five points read as a
	// line (and make the overview's screenshot, docs/console-overview.png).
	r.poll(time.Minute, func() string {
		pts, ok := r.attr(`svg[data-spark="status.totals.uris"] polyline`, "points")
		if n := len(strings.Fields(pts)); !ok || n < 5 {
			return fmt.Sprintf("URIs/s sparkline has %d points", n)
		}
		return ""
	})
	if alive := r.text(`[data-live="workers"]`); alive != "1" {
		t.Fatalf("workers alive: %q, want the run's one", alive)
	}
	if actor := r.text("#actor"); actor != "console:operator" {
		t.Fatalf("actor shown: %q", actor)
	}
	r.shot("overview")
	r.narrow("overview-375")

	// The hosts page lists both sites' queues; host B's page shows its queue.
	hostB := r.b.host()
	r.do(chromedp.Navigate(r.base + "/console/hosts"))
	r.poll(time.Minute, func() string {
		r.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#queues")))
		if q := r.text("#queues"); !strings.Contains(q, hostB) || !strings.Contains(q, r.a.host()) {
			return "queues: " + q
		}
		return ""
	})
	r.shot("hosts")
	r.do(chromedp.Navigate(r.base + "/console/host?h=" + url.QueryEscape(hostB)))
	r.do(chromedp.WaitVisible(chromedp.CSS("#next-uris")))
	if !strings.Contains(r.text("#next-uris"), "http://"+hostB+"/") {
		t.Fatalf("host page's next URIs: %s", r.text("#next-uris"))
	}
	r.shot("host")

	// Pause host B: acknowledged, by the operator, and B is not fetched
	// any more while A goes on.
	r.do(chromedp.Click(chromedp.CSS("#pause-host")), chromedp.WaitVisible(chromedp.CSS("#ack")))
	r.waitAck("ack-pause")
	baseB := r.quiet(r.b.hits.Load)
	r.waitMore(&r.a.hits, 10)
	if n := r.b.hits.Load(); n != baseB {
		t.Fatalf("host %s fetched %d times after its pause was acknowledged", hostB, n-baseB)
	}
	r.do(chromedp.Navigate(r.base + "/console/host?h=" + url.QueryEscape(hostB)))
	if st := r.text("#host-state"); !strings.Contains(st, "paused") {
		t.Fatalf("paused host's state: %q", st)
	}
	r.shot("host-paused")

	// A URL: its explain report and its capture with a replay link.
	seedA := r.a.seed()
	r.poll(2*time.Minute, func() string {
		r.do(chromedp.Navigate(r.base + "/console/url?u=" + url.QueryEscape(seedA)))
		r.do(chromedp.WaitVisible(chromedp.CSS("#captures")))
		href, ok := r.attr("#captures a.replay", "href")
		if !ok {
			return "no capture of the seed yet"
		}
		if want := "http://localhost:8080/wayback/"; !strings.HasPrefix(href, want) || !strings.HasSuffix(href, seedA) {
			return "replay link " + href
		}
		return ""
	})
	if v := r.text("#scope"); !strings.Contains(v, "ACCEPT") {
		t.Fatalf("seed's scope decision: %q", v)
	}
	r.shot("url")

	// A crawled page titled <script>alert(1)</script>: its title, read
	// back from the archive, shows as text (were it markup, the alert's
	// dialog would fail the test).
	hostile := r.a.seed() + "hostile"
	r.poll(2*time.Minute, func() string {
		r.do(chromedp.Navigate(r.base + "/console/url?u=" + url.QueryEscape(hostile)))
		r.do(chromedp.WaitVisible(chromedp.CSS("#captures")))
		title, ok := r.textIf("#captures td.title")
		switch {
		case !ok:
			return "no capture of the hostile page yet"
		case title != "<script>alert(1)</script>":
			return "hostile page's title shown as " + strconv.Quote(title)
		}
		return ""
	})
	r.shot("url-hostile-title")

	// An exclusion: acknowledged, no fetch under it afterwards, and the
	// URL page names it.
	exPrefix := r.a.seed() + "ex/"
	r.do(chromedp.Navigate(r.base+"/console/control"), chromedp.WaitVisible(chromedp.CSS("#exclusions-form")))
	r.shot("control")
	r.do(chromedp.SendKeys(chromedp.CSS("#exclusion-urls"), exPrefix), chromedp.Click(chromedp.CSS("#exclusion-confirm")),
		chromedp.Click(chromedp.CSS("#exclusion-submit")), chromedp.WaitVisible(chromedp.CSS("#ack")))
	r.waitAck("ack-exclusion")
	baseEx := r.quiet(r.a.exHits.Load)
	r.waitMore(&r.a.hits, 10)
	if n := r.a.exHits.Load(); n != baseEx {
		t.Fatalf("%d fetches under %s after its exclusion was acknowledged", n-baseEx, exPrefix)
	}
	r.do(chromedp.Navigate(r.base + "/console/url?u=" + url.QueryEscape(exPrefix+"1000")))
	if ex := r.text("#exclusions"); ex == "none" || !strings.Contains(r.text("#verdict"), "xclu") {
		t.Fatalf("excluded URL's page: exclusions %q, verdict %q", ex, r.text("#verdict"))
	}
	r.shot("url-excluded")

	// Resume host B: fetched again.
	r.do(chromedp.Navigate(r.base+"/console/host?h="+url.QueryEscape(hostB)), chromedp.Click(chromedp.CSS("#resume-host")),
		chromedp.WaitVisible(chromedp.CSS("#ack")))
	r.waitAck("ack-resume")
	r.waitMore(&r.b.hits, 3)

	// Launches, reports and the crawl.log tail, filtered to the hostile
	// page's link (shown as text: a script would open a dialog).
	r.do(chromedp.Navigate(r.base+"/console/launches"), chromedp.WaitVisible(chromedp.CSS("#launches")))
	r.shot("launches")
	r.poll(time.Minute, func() string {
		r.do(chromedp.Navigate(r.base+"/console/log?q=uote"), chromedp.WaitVisible(chromedp.CSS("#log-lines")))
		if l := r.text("#log-lines"); !strings.Contains(l, "uote") {
			return "the hostile link is not in crawl.log yet"
		}
		return ""
	})
	r.shot("log")
	r.do(chromedp.Navigate(r.base + "/console/control"))
	if rec := r.text("#recent"); strings.Count(rec, "console:operator") != 3 {
		t.Fatalf("recent commands: %s", rec)
	}
	r.shot("control-after")
}

// startCrawl starts a standalone crawl of both sites, its console on a
// free port with a replay template, and returns the operator token.
func (r *consoleRun) startCrawl() string {
	t := r.t
	dir := t.TempDir()
	const token = "console-test-operator-token"
	tokenFile := filepath.Join(dir, "admin-token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testProfile()
	// Slow enough that the crawl goes on for the whole test.
	p.Politeness.MinDelayMs, p.Politeness.MaxDelayMs = 150, 300
	adminAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	r.dataDir = filepath.Join(dir, "data")
	cfg := Config{DataDir: r.dataDir, Seeds: []string{r.a.seed(), r.b.seed()}, AdminAddr: adminAddr, CDXAddr: "",
		KafkaListen: "127.0.0.1:0", AdminTokenFile: tokenFile, Crawl: "fc", Stream: "npld", Threads: 4, Partitions: 2,
		TimeZone: "Europe/London", Render: renderOff}
	cfg.Console.WaybackURL = "http://localhost:8080/wayback/{timestamp}/{url}"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, cfg, Deps{Profile: p, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Registry: prometheus.NewRegistry(), Version: "test"})
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Errorf("standalone run: %v", err)
		}
	})
	r.base = "http://" + adminAddr
	poll(t, time.Minute, func() string {
		resp, err := http.Get(r.base + "/console/login")
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Sprintf("console login page: %d", resp.StatusCode)
		}
		return ""
	})
	return token
}

// do runs browser steps, failing the test on an error.
func (r *consoleRun) do(steps ...chromedp.Action[chromedp.Void]) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		r.t.Fatalf("browser: %v", err)
	}
}

// text is the text of the first element matching sel.
func (r *consoleRun) text(sel string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		r.t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// textIf is the text of the first element matching sel, if there is one.
func (r *consoleRun) textIf(sel string) (string, bool) {
	r.t.Helper()
	v, err := chromedp.Run(r.ctx, chromedp.Evaluate[*string](
		`(function(){var e=document.querySelector(`+strconv.Quote(sel)+`);return e?e.textContent:null})()`))
	if err != nil {
		r.t.Fatalf("text of %s: %v", sel, err)
	}
	if v == nil {
		return "", false
	}
	return *v, true
}

// attr is an attribute of the first element matching sel, if there is one.
func (r *consoleRun) attr(sel, name string) (string, bool) {
	r.t.Helper()
	v, err := chromedp.Run(r.ctx, chromedp.Evaluate[*string](
		`(function(){var e=document.querySelector(`+strconv.Quote(sel)+`);return e?e.getAttribute(`+strconv.Quote(name)+`):null})()`))
	if err != nil {
		r.t.Fatalf("attribute %s of %s: %v", name, sel, err)
	}
	if v == nil {
		return "", false
	}
	return *v, true
}

// poll retries f until it returns "" or d passes.
func (r *consoleRun) poll(d time.Duration, f func() string) {
	r.t.Helper()
	poll(r.t, d, f)
}

// shot saves a full-page screenshot as <name>.png.
func (r *consoleRun) shot(name string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		r.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(r.shots, name+".png"), png, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// narrow screenshots the page at 375 px wide and checks that it does not
// scroll sideways, then returns to 1280 px.
func (r *consoleRun) narrow(name string) {
	r.t.Helper()
	r.do(chromedp.EmulateViewport(375, 812), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("main")))
	w, err := chromedp.Run(r.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil {
		r.t.Fatal(err)
	}
	if w > 375 {
		r.t.Errorf("%s: the page is %d px wide at a 375 px viewport", name, w)
	}
	r.shot(name)
	r.do(chromedp.EmulateViewport(1280, 900), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("main")))
}

// waitAck waits for the open acknowledgement page to show the workers'
// acknowledgement (the page's script polls for it) sent by the operator.
func (r *consoleRun) waitAck(name string) {
	r.t.Helper()
	r.poll(time.Minute, func() string {
		if st := r.text("#ack-state"); !strings.HasPrefix(st, "acknowledged") {
			return "ack: " + st
		}
		return ""
	})
	if st := r.text("#ack-state"); strings.Contains(st, "error") || !strings.Contains(st, "console:operator") {
		r.t.Fatalf("%s: %q", name, st)
	}
	if by := r.text("#ack-by"); by != "console:operator" {
		r.t.Fatalf("%s: sent by %q", name, by)
	}
	r.shot(name)
}

// waitMore waits until counter has grown by n.
func (r *consoleRun) waitMore(counter *atomic.Int64, n int64) {
	r.t.Helper()
	from := counter.Load()
	deadline := time.Now().Add(time.Minute)
	for counter.Load()-from < n {
		if time.Now().After(deadline) {
			// Say why: what the console knows of site A's queue.
			r.do(chromedp.Navigate(r.base + "/console/host?h=" + url.QueryEscape(r.a.host())))
			r.shot("stuck")
			r.t.Fatalf("%d more requests of %d after a minute; site A's page says: %s", counter.Load()-from, n, r.text("main"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// quiet lets a fetch that was in flight when a command was acknowledged
// land (site A serves a few more requests meanwhile), then reads count.
func (r *consoleRun) quiet(count func() int64) int64 {
	r.t.Helper()
	r.waitMore(&r.a.hits, 3)
	return count()
}
