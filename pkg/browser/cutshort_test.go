package browser

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// browserContexts lists the browser contexts the pool's browser has
// created for pages and not yet disposed of.
func browserContexts(t *testing.T, p *Pool) []cdp.BrowserContextID {
	t.Helper()
	in, err := p.current(context.Background()) // under the lock: a restart may replace the browser
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cdp.Call(ctx, chromedp.FromContext(in.ctx).Browser, target.GetBrowserContexts, cdp.Empty{})
	if err != nil {
		t.Fatalf("Target.getBrowserContexts: %v", err)
	}
	return res.BrowserContextIDs
}

// A render cut short at any point, before navigating included (where a
// loaded machine's page budget may run out), leaves no browser context
// behind, and the pool renders the next page. The caller's context cuts
// the renders, so that the page budget stays ample for the last one; both
// end a render the same way. The short cuts land while the browser
// creates the page's context: its id used to be lost with the abandoned
// answer, and the context was never disposed of.
func TestRenderCutShortLeavesNothing(t *testing.T) {
	o := newOrigin(t)
	px := newProxy(t, o)
	cfg := testConfig(t)
	cfg.Tabs = 1
	p := newPool(t, cfg)
	for _, cut := range []time.Duration{0, time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
		10 * time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond, time.Second} {
		ctx, cancel := context.WithTimeout(context.Background(), cut)
		_, err := p.Render(ctx, Page{URL: o.u("/hang"), ProxyServer: px.URL})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("cut after %s: err = %v, want DeadlineExceeded", cut, err)
		}
		// A context created after the cut is disposed of once Chromium
		// answers, which can be after Render returned.
		waitUntil(t, 2*closeTimeout, "the cut render's browser context to be disposed of", func() bool {
			return len(browserContexts(t, p)) == 0
		})
	}
	if res := renderRecovered(t, p, Page{URL: o.u("/final"), ProxyServer: px.URL}); res.Title != "Final" {
		t.Errorf("render after the cut ones: title %q", res.Title)
	}
}

// A browser frozen before a page gets its context is stuck as surely as
// one that cannot close a tab: it is restarted, so that it does not fail
// every page after, whether the page's budget outlasts closeTimeout (the
// render says the browser was restarted) or not (the render has run out
// of time before the restart).
func TestBrowserStuckBeforeThePage(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pageTimeout time.Duration
		want        error
	}{
		{"budget longer than closeTimeout", 3 * closeTimeout, ErrBrowserCrashed},
		{"budget shorter than closeTimeout", closeTimeout / 2, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t)
			px := newProxy(t, o)
			cfg := testConfig(t)
			cfg.Tabs = 1
			cfg.PageTimeout = tc.pageTimeout
			p := newPool(t, cfg)
			pid := p.inst.pid
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			_, err := p.Render(context.Background(), Page{URL: o.u("/final"), ProxyServer: px.URL})
			if !errors.Is(err, tc.want) {
				t.Errorf("render on the frozen browser: err = %v, want %v", err, tc.want)
			}
			waitUntil(t, closeTimeout+startTimeout, "the frozen browser to be restarted", func() bool { return p.Restarts() == 1 })
			if res := renderRecovered(t, p, Page{URL: o.u("/final"), ProxyServer: px.URL}); res.Title != "Final" {
				t.Errorf("render after the restart: title %q", res.Title)
			}
		})
	}
}
