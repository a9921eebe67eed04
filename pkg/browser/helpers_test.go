package browser

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// needChromium skips the test when no Chromium binary is installed.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := findExec(""); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true: %v (scripts/install-test-deps.sh installs chromium)", err)
		}
		t.Skip(err)
	}
}

// testConfig is a small, quick configuration for tests.
func testConfig(t *testing.T) Config {
	return Config{
		ExecPath:    os.Getenv("BROWSER_TEST_EXEC"),
		Tabs:        2,
		PageTimeout: 15 * time.Second,
		NoSandbox:   true,
		DataDir:     t.TempDir(),
		Log:         slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

func newPool(t *testing.T, cfg Config) *Pool {
	t.Helper()
	needChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// recorder is a concurrency-safe list of strings.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.seen = append(r.seen, s)
	r.mu.Unlock()
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func (r *recorder) has(s string) bool { return slices.Contains(r.list(), s) }

// origin is the test web site. It records the absolute URL of every request
// it serves, and the Cookie header of /cookie-check.
type origin struct {
	*httptest.Server
	requests recorder
	cookies  recorder
	release  chan struct{} // closed at cleanup, frees hanging handlers
}

func pngBytes(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{R: 200, A: 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func newOrigin(t *testing.T) *origin {
	o := &origin{release: make(chan struct{})}
	img := pngBytes(4, 4)
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, body)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/js", html(`<!DOCTYPE html><html><head><title>JS page</title>
<script src="/app.js"></script></head><body><img src="/img.png"><div id="links"></div></body></html>`))
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, `document.addEventListener("DOMContentLoaded", () => {
  const a = document.createElement("a");
  a.href = "/js-only-1"; a.textContent = "one";
  document.getElementById("links").appendChild(a);
  fetch("/data.json").then(r => r.json()).then(d => {
    const b = document.createElement("a");
    b.href = d.next; b.textContent = "two";
    document.getElementById("links").appendChild(b);
  });
});`)
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"next": "/js-only-2"}`)
	})
	pngHandler := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(img)
	}
	mux.HandleFunc("/img.png", pngHandler)
	mux.HandleFunc("/lazy.png", pngHandler)
	mux.HandleFunc("/a.png", pngHandler)
	mux.HandleFunc("/b.png", pngHandler)
	mux.HandleFunc("/lazy", html(`<!DOCTYPE html><html><body style="margin:0">
<div style="height:4000px">tall</div>
<img id="lazy" data-src="/lazy.png" width="10" height="10">
<script>
new IntersectionObserver((entries, obs) => {
  for (const e of entries) if (e.isIntersecting) { e.target.src = e.target.dataset.src; obs.disconnect(); }
}).observe(document.getElementById("lazy"));
</script></body></html>`))
	mux.HandleFunc("/pageA", html(`<html><body><img src="/a.png"></body></html>`))
	mux.HandleFunc("/pageB", html(`<html><body><img src="/b.png"></body></html>`))
	mux.HandleFunc("/cookie-set", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sess", Value: "1", Path: "/", MaxAge: 3600})
		html(`<html><body>set</body></html>`)(w, r)
	})
	mux.HandleFunc("/cookie-check", func(w http.ResponseWriter, r *http.Request) {
		o.cookies.add(r.Header.Get("Cookie"))
		html(`<html><body>check</body></html>`)(w, r)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/final", http.StatusFound)
	})
	mux.HandleFunc("/final", html(`<!DOCTYPE html><html><head><title>Final</title></head><body>final</body></html>`))
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `<html><head><title>Not here</title></head><body>404</body></html>`)
	})
	hang := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-o.release:
		}
	}
	mux.HandleFunc("/hang", hang)
	mux.HandleFunc("/hold.png", hang)
	mux.HandleFunc("/holding", html(`<html><body>holding <img src="/hold.png"></body></html>`))

	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.requests.add("http://" + r.Host + r.URL.RequestURI())
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(o.Close)
	t.Cleanup(func() { close(o.release) }) // runs before o.Close
	return o
}

// u returns the absolute URL of path on the origin.
func (o *origin) u(path string) string { return o.URL + path }

// proxy is a forwarding HTTP proxy that records every absolute URL it is
// asked for. It refuses CONNECT, and records those attempts too. Host names
// (not IP addresses) are sent to the origin, so pages can use real names.
type proxy struct {
	*httptest.Server
	requests recorder
	connects recorder
}

func newProxy(t *testing.T, o *origin) *proxy {
	p := &proxy{}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, _ := net.SplitHostPort(addr); o != nil && net.ParseIP(host) == nil {
			addr = o.Listener.Addr().String()
		}
		return dial(ctx, network, addr)
	}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect {
			p.connects.add(r.Host)
			http.Error(w, "no CONNECT here", http.StatusMethodNotAllowed)
			return
		}
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		p.requests.add(r.URL.String())
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.Header.Del("Proxy-Connection")
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(tr.CloseIdleConnections)
	t.Cleanup(p.Close)
	return p
}

// waitUntil polls cond until it holds or the deadline passes.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ourProcesses lists processes whose command line names dir.
func ourProcesses(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(b, []byte(dir)) || e.Name() == "self" {
			continue
		}
		out = append(out, e.Name()+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
	}
	return out
}
