package browser

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func render(t *testing.T, p *Pool, pg Page) *Result {
	t.Helper()
	res, err := p.Render(context.Background(), pg)
	if err != nil {
		t.Fatalf("Render(%s): %v", pg.URL, err)
	}
	return res
}

// renderRecovered renders pg on a pool that has just been through a
// crash, a freeze or a cut render, which its test gives a short page
// budget. The test is about the pool working again, not about how fast a
// fresh browser starts on a loaded machine: a render that runs out of
// budget is tried again, up to three times.
func renderRecovered(t *testing.T, p *Pool, pg Page) *Result {
	t.Helper()
	var err error
	for range 3 {
		var res *Result
		if res, err = p.Render(context.Background(), pg); err == nil {
			return res
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	t.Fatalf("Render(%s) after recovery: %v", pg.URL, err)
	return nil
}

// TestRender covers what one shared pool can show: scripts, proxying,
// screenshots, lazy loading, isolation and statuses.
func TestRender(t *testing.T) {
	needChromium(t)
	o := newOrigin(t)
	fallback := newProxy(t, nil)
	cfg := testConfig(t)
	cfg.FallbackProxy = fallback.URL
	p := newPool(t, cfg)

	t.Run("script links go through the page proxy", func(t *testing.T) {
		px := newProxy(t, o)
		before := len(o.requests.list())
		res := render(t, p, Page{URL: o.u("/js"), ProxyServer: px.URL})
		for _, want := range []string{`href="/js-only-1"`, `href="/js-only-2"`} {
			if !bytes.Contains(res.DOM, []byte(want)) {
				t.Errorf("DOM lacks %s:\n%s", want, res.DOM)
			}
		}
		if !bytes.HasPrefix(res.DOM, []byte("<!DOCTYPE html>\n<html")) {
			t.Errorf("DOM does not start with the doctype line: %.60q", res.DOM)
		}
		for _, path := range []string{"/js", "/app.js", "/img.png", "/data.json"} {
			if !px.requests.has(o.u(path)) {
				t.Errorf("proxy did not see %s; saw %v", path, px.requests.list())
			}
		}
		atOrigin := o.requests.list()[before:]
		seen := px.requests.list()
		slices.Sort(atOrigin)
		slices.Sort(seen)
		// Chromium asks for /favicon.ico on its own; it too must be proxied.
		if !slices.Equal(atOrigin, seen) {
			t.Errorf("origin saw %v, proxy saw %v: some requests bypassed the proxy", atOrigin, seen)
		}
		if res.Title != "JS page" || res.Status != 200 || res.URL != o.u("/js") {
			t.Errorf("title %q status %d url %q", res.Title, res.Status, res.URL)
		}
		if res.Requests < 4 {
			t.Errorf("Requests = %d, want at least 4", res.Requests)
		}
		if len(px.connects.list()) > 0 {
			t.Errorf("unexpected CONNECTs: %v", px.connects.list())
		}
	})

	t.Run("screenshot has the viewport size", func(t *testing.T) {
		px := newProxy(t, o)
		res := render(t, p, Page{URL: o.u("/final"), ProxyServer: px.URL})
		img, err := png.Decode(bytes.NewReader(res.Screenshot))
		if err != nil {
			t.Fatalf("decoding screenshot: %v", err)
		}
		if got := img.Bounds().Size(); got.X != 1280 || got.Y != 960 || res.Viewport != (Size{1280, 960}) {
			t.Errorf("screenshot %v, viewport %v, want 1280x960", got, res.Viewport)
		}
	})

	t.Run("lazy image", func(t *testing.T) {
		for _, tc := range []struct {
			steps int
			want  bool
		}{{0, false}, {8, true}} {
			px := newProxy(t, o)
			res := render(t, p, Page{URL: o.u("/lazy"), ProxyServer: px.URL, ScrollSteps: tc.steps})
			if got := px.requests.has(o.u("/lazy.png")); got != tc.want {
				t.Errorf("ScrollSteps %d: lazy image requested = %v, want %v (saw %v)", tc.steps, got, tc.want, px.requests.list())
			}
			if img, err := png.Decode(bytes.NewReader(res.Screenshot)); err != nil || img.Bounds().Dy() != 960 {
				t.Errorf("ScrollSteps %d: screenshot after scrolling: %v", tc.steps, err)
			}
		}
	})

	t.Run("concurrent renders use their own proxies", func(t *testing.T) {
		pa, pb := newProxy(t, o), newProxy(t, o)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, pg := range []Page{{URL: o.u("/pageA"), ProxyServer: pa.URL}, {URL: o.u("/pageB"), ProxyServer: pb.URL}} {
			wg.Go(func() { _, errs[i] = p.Render(context.Background(), pg) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			px         *proxy
			own, other string
		}{{pa, "/a.png", "/b.png"}, {pb, "/b.png", "/a.png"}} {
			if !tc.px.requests.has(o.u(tc.own)) || tc.px.requests.has(o.u(tc.other)) {
				t.Errorf("proxy saw %v, want %s and not %s", tc.px.requests.list(), tc.own, tc.other)
			}
		}
	})

	t.Run("cookies do not carry over", func(t *testing.T) {
		px := newProxy(t, o)
		render(t, p, Page{URL: o.u("/cookie-set"), ProxyServer: px.URL})
		render(t, p, Page{URL: o.u("/cookie-check"), ProxyServer: px.URL})
		if got := o.cookies.list(); len(got) != 1 || got[0] != "" {
			t.Errorf("second render sent cookies %q", got)
		}
	})

	t.Run("status and final URL", func(t *testing.T) {
		px := newProxy(t, o)
		for _, tc := range []struct {
			url, wantURL, title string
			status              int
		}{
			{o.u("/redirect"), o.u("/final"), "Final", 200},
			{o.u("/missing"), o.u("/missing"), "Not here", 404},
			// A real host name: Chromium must neither resolve it itself nor
			// upgrade it to https.
			{"http://www.example.com/redirect", "http://www.example.com/final", "Final", 200},
		} {
			res := render(t, p, Page{URL: tc.url, ProxyServer: px.URL})
			if res.Status != tc.status || res.URL != tc.wantURL || res.Title != tc.title {
				t.Errorf("%s: status %d url %q title %q, want %d %q %q", tc.url, res.Status, res.URL, res.Title, tc.status, tc.wantURL, tc.title)
			}
		}
		if c := px.connects.list(); len(c) > 0 {
			t.Errorf("CONNECT attempts (https upgrade?): %v", c)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		px := newProxy(t, o)
		for _, u := range []string{"", "not a url", "ftp://example.com/", "file:///etc/passwd", "javascript:alert(1)", "http://", "http://256.256.256.256/"} {
			start := time.Now()
			_, err := p.Render(context.Background(), Page{URL: u, ProxyServer: px.URL})
			if err == nil {
				t.Errorf("%q: no error", u)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%q: took %s", u, d)
			}
			t.Logf("%q: %v", u, err)
		}
		if _, err := p.Render(context.Background(), Page{URL: o.u("/final")}); err == nil {
			t.Error("no error without a proxy")
		}
	})

	t.Run("no background traffic", func(t *testing.T) {
		if got := fallback.requests.list(); len(got) > 0 {
			t.Errorf("fallback proxy saw %v", got)
		}
		if got := fallback.connects.list(); len(got) > 0 {
			t.Errorf("fallback proxy saw CONNECTs to %v", got)
		}
	})
	if p.Restarts() != 0 {
		t.Errorf("Restarts = %d", p.Restarts())
	}
}

func TestViewport(t *testing.T) {
	o := newOrigin(t)
	px := newProxy(t, o)
	cfg := testConfig(t)
	cfg.Tabs = 1
	cfg.Viewport = Size{Width: 640, Height: 400}
	p := newPool(t, cfg)
	res := render(t, p, Page{URL: o.u("/lazy"), ProxyServer: px.URL, ScrollSteps: 2})
	img, err := png.Decode(bytes.NewReader(res.Screenshot))
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got.X != 640 || got.Y != 400 {
		t.Errorf("screenshot %v, want 640x400", got)
	}
}

func TestHungPage(t *testing.T) {
	o := newOrigin(t)
	px := newProxy(t, o)
	cfg := testConfig(t)
	cfg.PageTimeout = 3 * time.Second
	p := newPool(t, cfg)
	start := time.Now()
	_, err := p.Render(context.Background(), Page{URL: o.u("/hang"), ProxyServer: px.URL})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want DeadlineExceeded", err)
	}
	t.Logf("hung render: %v after %s, restarts %d", err, time.Since(start), p.Restarts())
	if errors.Is(err, ErrBrowserCrashed) != (p.Restarts() > 0) {
		t.Errorf("ErrBrowserCrashed %v but %d restarts", errors.Is(err, ErrBrowserCrashed), p.Restarts())
	}
	res := renderRecovered(t, p, Page{URL: o.u("/final"), ProxyServer: px.URL})
	if res.Title != "Final" {
		t.Errorf("next render title %q", res.Title)
	}
}

func TestCallerCancel(t *testing.T) {
	o := newOrigin(t)
	px := newProxy(t, o)
	p := newPool(t, testConfig(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := p.Render(ctx, Page{URL: o.u("/hang"), ProxyServer: px.URL})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrBrowserCrashed) {
		t.Errorf("err = %v", err)
	}
}

func TestCrash(t *testing.T) {
	o := newOrigin(t)
	px := newProxy(t, o)
	cfg := testConfig(t)
	p := newPool(t, cfg)
	pid, oldDir := p.inst.pid, p.inst.dir
	oldSock := liveSingletonDir(t, oldDir)
	if pid == 0 {
		t.Fatal("no browser pid")
	}
	// Two renders at once: both fail, the browser restarts once.
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := p.Render(context.Background(), Page{URL: o.u("/holding"), ProxyServer: px.URL})
			done <- err
		}()
	}
	waitUntil(t, 30*time.Second, "both pages to start loading", func() bool {
		return len(slices.DeleteFunc(o.requests.list(), func(s string) bool { return s != o.u("/hold.png") })) == 2
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for range 2 {
		select {
		case err := <-done:
			if !errors.Is(err, ErrBrowserCrashed) {
				t.Fatalf("err = %v, want ErrBrowserCrashed", err)
			}
			t.Logf("crashed render: %v", err)
		case <-timeout:
			t.Fatal("Render did not return after the browser was killed")
		}
	}
	if n := p.Restarts(); n != 1 {
		t.Errorf("Restarts = %d, want 1", n)
	}
	if left := ourProcesses(oldDir); len(left) > 0 {
		t.Errorf("processes of the crashed browser left: %v", left)
	}
	if _, err := os.Stat(oldDir); !os.IsNotExist(err) {
		t.Errorf("profile directory of the crashed browser left: %v", err)
	}
	if _, err := os.Stat(oldSock); !os.IsNotExist(err) {
		t.Errorf("singleton socket directory of the crashed browser left: %v", err)
	}
	res := renderRecovered(t, p, Page{URL: o.u("/final"), ProxyServer: px.URL})
	if res.Title != "Final" {
		t.Errorf("title after restart %q", res.Title)
	}
}

// TestStuckBrowser freezes the browser mid-render: the tab cannot be closed,
// so the pool restarts the browser and says so.
func TestStuckBrowser(t *testing.T) {
	o := newOrigin(t)
	px := newProxy(t, o)
	cfg := testConfig(t)
	cfg.PageTimeout = 3 * time.Second
	p := newPool(t, cfg)
	pid := p.inst.pid
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := p.Render(context.Background(), Page{URL: o.u("/holding"), ProxyServer: px.URL})
		done <- err
	}()
	waitUntil(t, 30*time.Second, "the page to start loading", func() bool { return o.requests.has(o.u("/hold.png")) })
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrBrowserCrashed) {
			t.Errorf("err = %v, want DeadlineExceeded and ErrBrowserCrashed", err)
		}
		t.Logf("stuck render: %v after %s", err, time.Since(start))
	case <-time.After(cfg.PageTimeout + closeTimeout + 10*time.Second):
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("Render did not return with the browser frozen")
	}
	if n := p.Restarts(); n != 1 {
		t.Errorf("Restarts = %d, want 1", n)
	}
	res := renderRecovered(t, p, Page{URL: o.u("/final"), ProxyServer: px.URL})
	if res.Title != "Final" {
		t.Errorf("title after restart %q", res.Title)
	}
}

func TestClose(t *testing.T) {
	o := newOrigin(t)
	px := newProxy(t, o)
	cfg := testConfig(t)
	p := newPool(t, cfg)
	render(t, p, Page{URL: o.u("/js"), ProxyServer: px.URL})
	dir := p.inst.dir
	if !strings.HasPrefix(dir, cfg.DataDir) {
		t.Errorf("profile %s not under %s", dir, cfg.DataDir)
	}
	if len(ourProcesses(dir)) == 0 {
		t.Fatal("no browser processes found before Close")
	}
	sock := liveSingletonDir(t, dir)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("Chromium's singleton socket directory %s left: %v", sock, err)
	}
	if left := ourProcesses(dir); len(left) > 0 {
		t.Errorf("processes left after Close: %v", left)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("profile directory left: %v", err)
	}
	if _, err := p.Render(context.Background(), Page{URL: o.u("/js"), ProxyServer: px.URL}); !errors.Is(err, ErrClosed) {
		t.Errorf("Render after Close: %v", err)
	}
}

// liveSingletonDir is the directory of the SingletonSocket that the
// browser of profile dir made under TMPDIR; it must exist.
func liveSingletonDir(t *testing.T, dir string) string {
	t.Helper()
	sock := singletonDir(dir)
	if sock == "" {
		t.Fatalf("no singleton socket link of Chromium's naming in the profile %s", dir)
	}
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("singleton socket directory %s: %v", sock, err)
	}
	return sock
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{ExecPath: "/nonexistent/chromium"},
		{Tabs: -1},
		{Viewport: Size{Width: -1, Height: 5}},
	} {
		if _, err := New(context.Background(), cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
}
