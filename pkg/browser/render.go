package browser

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// errTabCrashed is the cause of a render whose renderer process died while
// the browser survived.
var errTabCrashed = errors.New("browser: the page's renderer crashed")

// render renders pg in a new browser context of in. hung reports that the tab
// could not be closed in time and the browser was restarted because of it.
func (p *Pool) render(ctx context.Context, in *instance, pg Page) (res *Result, hung bool, err error) {
	started := time.Now()
	rctx, rcancel := context.WithTimeout(ctx, p.cfg.PageTimeout)
	defer rcancel()
	// Settling and loading give up this much before the budget ends, so that a
	// page that never goes quiet is still captured rather than lost.
	deadline, _ := rctx.Deadline()
	reserve := min(p.cfg.PageTimeout/5, 5*time.Second)
	settleBy := deadline.Add(-reserve)

	b := chromedp.FromContext(in.ctx).Browser
	bcID, hung, err := p.createContext(rctx, b, in, pg)
	if err != nil {
		return nil, hung, pageErr(rctx, nil, fmt.Errorf("creating browser context: %w", err))
	}

	tr := newTracker()
	// The tab's context hangs off the browser's, so that a browser crash ends
	// every wait of the render; rctx ending or the renderer crashing cancel it
	// too. chromedp's calls then fail with context.Canceled, and pageErr
	// recovers the real cause.
	pctx, pcancel := context.WithCancelCause(in.ctx)
	stop := context.AfterFunc(rctx, func() { pcancel(context.Cause(rctx)) })
	tr.onCrash = func() { pcancel(errTabCrashed) }
	tctx, tcancel := chromedp.NewContext(pctx,
		chromedp.WithExistingBrowserContext(bcID),
		chromedp.WithListener(tr.on))
	defer func() {
		stop()
		if !p.closeTab(tctx, tcancel, pcancel, b, bcID, in) {
			hung = true
		}
	}()

	res = &Result{Viewport: p.cfg.Viewport, Started: started}
	err = chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		return p.steps(ctx, t, tr, pg, settleBy, res)
	}))
	if err != nil {
		return nil, false, pageErr(rctx, pctx, err)
	}
	res.Requests = tr.requestCount()
	res.Finished = time.Now()
	return res, false, nil
}

// createContext creates the browser context of a page, with the page's
// proxy. Chromium creates it even when rctx ends while the call is on the
// wire, and an abandoned answer would take the context's id with it: a
// context that nothing disposes of, one more for every page whose budget
// runs out at that moment. So the call does not hang off rctx but is
// bounded by closeTimeout, and when rctx ends first the context is disposed
// of once its id arrives. A browser that does not answer within
// closeTimeout is stuck, as in closeTab: it is restarted (hung), whether
// or not the caller still waits, so that the next page does not meet it.
func (p *Pool) createContext(rctx context.Context, b *chromedp.Browser, in *instance, pg Page) (id cdp.BrowserContextID, hung bool, err error) {
	if err := rctx.Err(); err != nil {
		return "", false, err // nothing sent
	}
	type created struct {
		id   cdp.BrowserContextID
		hung bool
		err  error
	}
	answer := make(chan created) // unbuffered: a send hands the context to a caller still waiting
	// The caller's Render holds its place in running until the send or
	// rctx's end, so adding here cannot race with Close's Wait; Close waits
	// for the disposal too.
	p.running.Add(1)
	go func() {
		defer p.running.Done()
		cctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		res, err := cdp.Call(cctx, b, target.CreateBrowserContext, target.CreateBrowserContextParams{
			ProxyServer:     pg.ProxyServer,
			ProxyBypassList: bypassLoopback,
		})
		c := created{err: err}
		switch {
		case err == nil:
			c.id = res.BrowserContextID
		case cctx.Err() != nil && !in.dead():
			// Not the page's budget running out: the browser's fault.
			c.hung, c.err = true, fmt.Errorf("no answer within %s: the browser is stuck", closeTimeout)
			p.restart(in, "browser did not create a context in time")
		}
		select {
		case answer <- c:
		case <-rctx.Done():
			if c.err == nil {
				dctx, dcancel := context.WithTimeout(context.Background(), closeTimeout)
				defer dcancel()
				_, _ = cdp.Call(dctx, b, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: c.id})
			}
		}
	}()
	select {
	case c := <-answer:
		return c.id, c.hung, c.err
	case <-rctx.Done():
		return "", false, rctx.Err()
	}
}

// pageErr gives err the cause that matters to the caller: the page's budget,
// the caller's cancellation or a renderer crash, rather than the
// context.Canceled that chromedp reports for all of them.
func pageErr(rctx, pctx context.Context, err error) error {
	if pctx != nil && errors.Is(context.Cause(pctx), errTabCrashed) {
		return fmt.Errorf("%w: %w", errTabCrashed, err)
	}
	if cerr := rctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return err
}

// steps drives one tab: viewport, navigation, load, settle, scroll, capture.
func (p *Pool) steps(ctx context.Context, t *chromedp.Target, tr *tracker, pg Page, settleBy time.Time, res *Result) error {
	// In Chromium the main frame's id is the page target's id; knowing it
	// before navigating lets the tracker pick out the main document.
	tr.setMainFrame(cdp.FrameID(t.TargetID))
	vp := p.cfg.Viewport
	if _, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width:             int64(vp.Width),
		Height:            int64(vp.Height),
		DeviceScaleFactor: 1,
	}); err != nil {
		return fmt.Errorf("setting the viewport: %w", err)
	}

	nav, err := cdp.Call(ctx, t, page.Navigate, page.NavigateParams{URL: pg.URL})
	switch {
	case err != nil:
		return fmt.Errorf("navigating: %w", err)
	case nav.IsDownload:
		return errors.New("navigating: the URL is a download, not a page")
	case nav.ErrorText != "" && tr.docStatus() == 0:
		// With a response (an error status with an empty body) Chromium also
		// reports an error, but there is a status and a page to keep.
		return fmt.Errorf("navigating: %s", nav.ErrorText)
	}
	loaded, err := tr.waitFor(ctx, settleBy, func() bool { return tr.loaded(nav.LoaderID) })
	if err != nil {
		return err
	}
	if !loaded {
		if tr.docStatus() == 0 {
			return fmt.Errorf("waiting for the page: no response before %s: %w", settleBy.Format(time.TimeOnly), context.DeadlineExceeded)
		}
		p.log.Debug("page did not fire load in time; capturing what there is", "url", pg.URL)
	}
	if err := p.settle(ctx, tr, pg, settleBy); err != nil {
		return err
	}

	for range pg.ScrollSteps {
		if time.Now().After(settleBy) {
			break
		}
		if _, err := chromedp.Evaluate[chromedp.Void](`window.scrollBy(0, window.innerHeight)`)(ctx, t); err != nil {
			return fmt.Errorf("scrolling: %w", err)
		}
		// Lazy loaders react a frame or more after the scroll; count the
		// scroll as activity so settling waits for them.
		tr.touch()
		if err := p.settle(ctx, tr, pg, settleBy); err != nil {
			return err
		}
		// Checked after settling, so that a page that grew because of the
		// scroll (infinite scroll) gets the next step.
		bottom, err := chromedp.Evaluate[bool](`(() => {
			const el = document.scrollingElement || document.documentElement;
			return !el || window.scrollY + window.innerHeight >= el.scrollHeight - 1;
		})()`)(ctx, t)
		if err != nil {
			return fmt.Errorf("scrolling: %w", err)
		}
		if bottom {
			break
		}
	}
	if pg.PlayMedia {
		n, err := p.playMedia(ctx, t, tr, pg, settleBy)
		if err != nil {
			return err
		}
		res.MediaElements = n
	}
	if pg.ScrollSteps > 0 || res.MediaElements > 0 {
		// Back to the top for the screenshot; the bounded wait for a frame
		// lets the page repaint there (a hidden tab might never paint).
		if _, err := chromedp.Evaluate[bool](`new Promise(resolve => {
			window.scrollTo(0, 0);
			requestAnimationFrame(() => resolve(true));
			setTimeout(() => resolve(false), 250);
		})`, chromedp.EvalAwaitPromise)(ctx, t); err != nil {
			return fmt.Errorf("scrolling to the top: %w", err)
		}
	}
	return capture(ctx, t, tr, res)
}

// playMediaJS starts the page's media elements, muted, each scrolled into
// view (lazy players attach their source when visible), and resolves to
// how many it found. play() is not awaited: a stream that never starts
// must not hold the render; settling waits for the requests it makes.
const playMediaJS = `(() => {
	const els = Array.from(document.querySelectorAll("video, audio"));
	for (const el of els) {
		try {
			el.muted = true;
			el.preload = "auto";
			el.scrollIntoView({block: "center"});
			const p = el.play();
			if (p && p.catch) p.catch(() => {});
		} catch (e) {}
	}
	return els.length;
})()`

// playMedia runs playMediaJS and settles on what it made the page load.
func (p *Pool) playMedia(ctx context.Context, t *chromedp.Target, tr *tracker, pg Page, settleBy time.Time) (int, error) {
	if time.Now().After(settleBy) {
		return 0, nil
	}
	n, err := chromedp.Evaluate[int](playMediaJS)(ctx, t)
	if err != nil {
		return 0, fmt.Errorf("starting media: %w", err)
	}
	if n > 0 {
		tr.touch()
		if err := p.settle(ctx, tr, pg, settleBy); err != nil {
			return n, err
		}
	}
	return n, nil
}

// snapshotJS serialises the document. XMLSerializer writes the doctype as the
// parser read it ("<!DOCTYPE html>" for HTML5 pages), keeping any public and
// system identifiers.
const snapshotJS = `(() => {
	const d = document;
	const doctype = d.doctype ? new XMLSerializer().serializeToString(d.doctype) + "\n" : "";
	const html = d.documentElement ? d.documentElement.outerHTML : "";
	return {dom: doctype + html, title: d.title, url: d.URL};
})()`

type snapshot struct {
	DOM   string `json:"dom"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

// capture fills res with the DOM, the title, the final URL and status, and a
// screenshot of the viewport.
func capture(ctx context.Context, t *chromedp.Target, tr *tracker, res *Result) error {
	snap, err := chromedp.Evaluate[snapshot](snapshotJS)(ctx, t)
	if err != nil {
		return fmt.Errorf("reading the DOM: %w", err)
	}
	shot, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatPng,
	})
	if err != nil {
		return fmt.Errorf("taking the screenshot: %w", err)
	}
	res.DOM = []byte(snap.DOM)
	res.Title = snap.Title
	res.Screenshot = shot.Data
	res.Status, res.URL = tr.doc()
	if res.URL == "" {
		// No response seen (e.g. served from the back-forward cache): the
		// document's own idea of its URL is the best there is.
		res.URL = snap.URL
	}
	return nil
}

// settle waits until no request has been in flight for pg.Settle. A page that
// is still busy at settleBy is not an error: it is captured as it is.
func (p *Pool) settle(ctx context.Context, tr *tracker, pg Page, settleBy time.Time) error {
	quiet, err := tr.waitQuiet(ctx, pg.Settle, settleBy)
	if err != nil {
		return err
	}
	if !quiet {
		p.log.Debug("network did not settle in time", "url", pg.URL, "in_flight", tr.inFlight())
	}
	return nil
}

// closeTab closes the tab and disposes of its browser context. If that takes
// longer than closeTimeout the browser is stuck: it is restarted, and closeTab
// reports false.
func (p *Pool) closeTab(tctx context.Context, tcancel context.CancelFunc, pcancel context.CancelCauseFunc,
	b *chromedp.Browser, id cdp.BrowserContextID, in *instance) bool {
	done := make(chan error, 1)
	go func() {
		pcancel(context.Canceled)
		err := chromedp.Cancel(tctx) // closes the tab, bounded by chromedp
		tcancel()
		// Disposing of the context drops its cookies and cache, and closes
		// any window the page opened.
		dctx, dcancel := context.WithTimeout(context.Background(), closeTimeout)
		defer dcancel()
		_, derr := cdp.Call(dctx, b, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: id})
		done <- errors.Join(err, derr)
	}()
	timer := time.NewTimer(closeTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil && !in.dead() {
			p.log.Debug("closing tab", "err", err)
		}
		return true
	case <-timer.C:
	}
	if in.dead() {
		// The browser crashed meanwhile; Render restarts it.
		<-done
		return true
	}
	p.restart(in, "tab did not close in time")
	<-done // the calls fail at once now that the browser is gone
	return false
}
