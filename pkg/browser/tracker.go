package browser

import (
	"context"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
)

// tracker follows one tab's events: requests in flight, the main document's
// response and its load. on runs on chromedp's reader goroutine, so it only
// records under the lock and never blocks; the render's goroutine waits on
// changed.
type tracker struct {
	onCrash func() // set before the tab exists, read only by on

	mu        sync.Mutex
	mainFrame cdp.FrameID
	requests  int
	inflight  map[network.RequestID]struct{}
	last      time.Time // last request start or end, or scroll
	loads     map[cdp.LoaderID]struct{}
	status    int
	url       string

	changed chan struct{} // a token after any change
}

func newTracker() *tracker {
	return &tracker{
		inflight: make(map[network.RequestID]struct{}),
		loads:    make(map[cdp.LoaderID]struct{}),
		last:     time.Now(),
		changed:  make(chan struct{}, 1),
	}
}

func (tr *tracker) notify() {
	select {
	case tr.changed <- struct{}{}:
	default:
	}
}

func (tr *tracker) on(ev any) {
	tr.mu.Lock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		// A redirect hop arrives as another requestWillBeSent with the same
		// id: one more request on the wire, still the same one in flight.
		tr.requests++
		tr.inflight[ev.RequestID] = struct{}{}
		tr.last = time.Now()
	case *network.EventLoadingFinished:
		delete(tr.inflight, ev.RequestID)
		tr.last = time.Now()
	case *network.EventLoadingFailed:
		delete(tr.inflight, ev.RequestID)
		tr.last = time.Now()
	case *network.EventResponseReceived:
		// Only the final response of a redirect chain is reported here, so
		// the last main-frame document response is the page's status.
		if ev.Type == network.ResourceTypeDocument && ev.FrameID == tr.mainFrame && ev.Response != nil {
			tr.status = int(ev.Response.Status)
			tr.url = ev.Response.URL
		}
	case *page.EventLifecycleEvent:
		if ev.Name == "load" && ev.FrameID == tr.mainFrame {
			tr.loads[ev.LoaderID] = struct{}{}
		}
	case *inspector.EventTargetCrashed:
		if tr.onCrash != nil {
			tr.onCrash()
		}
	default:
		tr.mu.Unlock()
		return
	}
	tr.mu.Unlock()
	tr.notify()
}

func (tr *tracker) setMainFrame(id cdp.FrameID) {
	tr.mu.Lock()
	tr.mainFrame = id
	tr.mu.Unlock()
}

// touch counts as network activity, restarting the quiet period.
func (tr *tracker) touch() {
	tr.mu.Lock()
	tr.last = time.Now()
	tr.mu.Unlock()
}

func (tr *tracker) loaded(id cdp.LoaderID) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	_, ok := tr.loads[id]
	return ok
}

func (tr *tracker) doc() (status int, url string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.status, tr.url
}

func (tr *tracker) docStatus() int {
	s, _ := tr.doc()
	return s
}

func (tr *tracker) requestCount() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.requests
}

func (tr *tracker) inFlight() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.inflight)
}

// waitFor waits until cond holds (true), until is reached (false) or ctx ends
// (its error).
func (tr *tracker) waitFor(ctx context.Context, until time.Time, cond func() bool) (bool, error) {
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	for {
		if cond() {
			return true, nil
		}
		select {
		case <-tr.changed:
		case <-timer.C:
			return cond(), nil
		case <-ctx.Done():
			return false, context.Cause(ctx)
		}
	}
}

// waitQuiet waits until no request has been in flight for quiet (true), until
// is reached (false) or ctx ends (its error).
func (tr *tracker) waitQuiet(ctx context.Context, quiet time.Duration, until time.Time) (bool, error) {
	limit := time.NewTimer(time.Until(until))
	defer limit.Stop()
	for {
		tr.mu.Lock()
		busy := len(tr.inflight) > 0
		left := quiet - time.Since(tr.last)
		tr.mu.Unlock()
		if !busy && left <= 0 {
			return true, nil
		}
		if busy {
			// Only an event can end the wait early.
			left = time.Until(until) + time.Second
		}
		wake := time.NewTimer(left)
		select {
		case <-tr.changed:
		case <-wake.C:
		case <-limit.C:
			wake.Stop()
			return false, nil
		case <-ctx.Done():
			wake.Stop()
			return false, context.Cause(ctx)
		}
		wake.Stop()
	}
}
