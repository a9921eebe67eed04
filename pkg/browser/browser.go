// Package browser is a bounded pool of headless Chromium tabs that render
// archived pages.
//
// Every Render runs in a fresh browser context (an incognito-like profile with
// its own cookies, cache and proxy), so that the caller can route all of one
// page's traffic through a recording proxy that belongs to that page alone.
// The pool starts Chromium itself, limits how many pages render at once, and
// restarts the browser when it crashes or hangs.
package browser

import (
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"time"
)

// Size is a width and a height in CSS pixels.
type Size struct{ Width, Height int }

// Config configures a Pool. The zero value of each field picks the default
// that its comment names.
type Config struct {
	// ExecPath is the Chromium binary. Empty means the first of "chromium",
	// "chromium-browser" and "google-chrome" that PATH has.
	ExecPath string
	// Tabs is how many pages render at once. Default 2.
	Tabs int
	// PageTimeout is the whole budget of one Render: navigation, settling,
	// scrolling and capture. Default 60s.
	PageTimeout time.Duration
	// Viewport is the size of the page's viewport and of the screenshot.
	// Default 1280x960.
	Viewport Size
	// SPKIHashes are the base64 SHA-256 hashes of the public keys that
	// Chromium accepts for TLS even though no root signs them: the leaf key of
	// the caller's intercepting proxy. Nothing else is trusted beyond the
	// system roots.
	SPKIHashes []string
	// FallbackProxy is the proxy of everything outside a page's browser
	// context, such as background requests of the browser itself. The default,
	// "http://127.0.0.1:9", is the discard port, which is closed on most
	// machines, so such traffic goes nowhere.
	FallbackProxy string
	// UserAgent replaces Chromium's own User-Agent header when not empty.
	UserAgent string
	// DataDir is the parent of the temporary --user-data-dir of each browser
	// launch. Empty means os.TempDir(). The temporary directory is removed when
	// the browser restarts and on Close.
	DataDir string
	// ReapStale says DataDir belongs to this pool alone: profile
	// directories that a crashed predecessor left there are removed at
	// New, and any browser process still using them is killed.
	ReapStale bool
	// NoSandbox turns Chromium's sandbox off, which it needs when it runs as
	// root and in most containers.
	NoSandbox bool
	// Log receives the pool's log records. Nil discards them.
	Log *slog.Logger
}

// Page is one page to render.
type Page struct {
	// URL is the http or https address of the page.
	URL string
	// ProxyServer is the proxy of this page's browser context, such as
	// "http://127.0.0.1:43121". Every request of the page goes there,
	// loopback addresses included.
	ProxyServer string
	// ScrollSteps is how many times to scroll down by one viewport height,
	// settling after each, to make lazy content load. Scrolling stops early at
	// the bottom of the page. 0 means no scrolling.
	ScrollSteps int
	// PlayMedia starts every <video> and <audio> element (muted), each
	// scrolled into view first, once the page has loaded and scrolled, so
	// media that only load on play or when visible are requested.
	PlayMedia bool
	// Settle is how long no request must be in flight for the network to
	// count as settled. Default 500ms. Settling never outlasts the page's
	// budget.
	Settle time.Duration
}

// Result is a rendered page.
type Result struct {
	// URL is the final URL of the document, after redirects.
	URL string
	// Status is the HTTP status of the main document, 0 if unknown.
	Status int
	// Title is the document's title.
	Title string
	// DOM is the serialised document after load, settling and scrolling:
	// its doctype line, if it has one, and document.documentElement.outerHTML.
	DOM []byte
	// Screenshot is a PNG of the viewport at the top of the page.
	Screenshot []byte
	// Viewport is the size of the viewport and of the screenshot.
	Viewport Size
	// Requests is how many requests the page made, redirect hops included.
	Requests int
	// MediaElements is how many <video> and <audio> elements PlayMedia
	// started (0 without it).
	MediaElements int
	// Started and Finished bound the render.
	Started, Finished time.Time
}

// ErrBrowserCrashed is wrapped by Render's error when the browser died, or had
// to be restarted, while the page rendered. The page itself may be fine, so
// the caller may retry it.
var ErrBrowserCrashed = errors.New("browser: browser crashed or was restarted")

// ErrClosed is returned by Render after Close.
var ErrClosed = errors.New("browser: pool closed")

const (
	defaultTabs          = 2
	defaultPageTimeout   = 60 * time.Second
	defaultSettle        = 500 * time.Millisecond
	defaultFallbackProxy = "http://127.0.0.1:9"
	// bypassLoopback removes Chromium's implicit bypass of loopback
	// addresses, so that requests to 127.0.0.1 and localhost also go through
	// the proxy and get recorded.
	bypassLoopback = "<-loopback>"
)

// execNames are the binaries looked up in PATH when Config.ExecPath is empty.
func execNames() []string { return []string{"chromium", "chromium-browser", "google-chrome"} }

// withDefaults returns cfg with every zero field set to its default, and the
// resolved path of the browser binary.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Tabs == 0 {
		cfg.Tabs = defaultTabs
	}
	if cfg.PageTimeout == 0 {
		cfg.PageTimeout = defaultPageTimeout
	}
	if cfg.Viewport == (Size{}) {
		cfg.Viewport = Size{Width: 1280, Height: 960}
	}
	if cfg.FallbackProxy == "" {
		cfg.FallbackProxy = defaultFallbackProxy
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.Tabs < 0:
		return cfg, fmt.Errorf("browser: Tabs must be positive, got %d", cfg.Tabs)
	case cfg.PageTimeout < 0:
		return cfg, fmt.Errorf("browser: PageTimeout must be positive, got %s", cfg.PageTimeout)
	case cfg.Viewport.Width <= 0 || cfg.Viewport.Height <= 0:
		return cfg, fmt.Errorf("browser: Viewport must be positive, got %dx%d", cfg.Viewport.Width, cfg.Viewport.Height)
	}
	path, err := findExec(cfg.ExecPath)
	if err != nil {
		return cfg, err
	}
	cfg.ExecPath = path
	return cfg, nil
}

// findExec resolves the browser binary: the configured one, or the first known
// name in PATH.
func findExec(configured string) (string, error) {
	if configured != "" {
		path, err := exec.LookPath(configured)
		if err != nil {
			return "", fmt.Errorf("browser: Chromium binary %q: %w", configured, err)
		}
		return path, nil
	}
	for _, name := range execNames() {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("browser: no Chromium binary in PATH (looked for %s); set ExecPath",
		strings.Join(execNames(), ", "))
}
