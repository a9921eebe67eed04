package worker

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// The crawl loops share one dispatcher: it claims URIs from the frontier in
// batches (one script call for up to Threads URIs) and hands them to the
// threads through a buffered channel. At most 2×Threads claims are
// outstanding (being crawled or waiting in the buffer); the dispatcher
// claims again once at least Threads of them have finished, so a claim
// call carries Threads URIs on average at full speed.
//
//	frontier ─Claim(n)─► dispatcher ─► work channel ─► threads ─► crawl ─► Complete (Batcher)
//	                         ▲                                      │
//	                         └────────── slot freed ◄───────────────┘
//
// Every outstanding claim is in held, whose leases one goroutine renews.

// slots counts free claim slots.
type slots struct {
	mu    sync.Mutex
	free  int
	freed chan struct{} // signalled (non-blocking) when a slot frees
}

func newSlots(n int) *slots { return &slots{free: n, freed: make(chan struct{}, 1)} }

func (s *slots) available() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.free
}

func (s *slots) take(n int) {
	s.mu.Lock()
	s.free -= n
	s.mu.Unlock()
}

func (s *slots) release() {
	s.mu.Lock()
	s.free++
	s.mu.Unlock()
	select {
	case s.freed <- struct{}{}:
	default:
	}
}

// held is the set of outstanding claims, for lease renewal.
type held struct {
	mu sync.Mutex
	m  map[*frontier.Claim]struct{}
}

func (h *held) add(cs []*frontier.Claim) {
	h.mu.Lock()
	for _, c := range cs {
		h.m[c] = struct{}{}
	}
	h.mu.Unlock()
}

func (h *held) remove(c *frontier.Claim) {
	h.mu.Lock()
	delete(h.m, c)
	h.mu.Unlock()
}

func (h *held) list() []*frontier.Claim {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*frontier.Claim, 0, len(h.m))
	for c := range h.m {
		out = append(out, c)
	}
	return out
}

// dispatch claims work until ctx ends, then closes work.
func (w *Worker) dispatch(ctx context.Context, work chan<- *frontier.Claim) {
	defer close(work)
	threshold := w.cfg.Threads
	idle := w.idleMin
	var last time.Time // start of the last claim call
	for ctx.Err() == nil {
		n := w.slots.available()
		if n < threshold {
			w.waitFor(ctx, w.slots.freed, nil, time.Second)
			continue
		}
		n, limit := w.budget(ctx, n)
		if limit != "" || n == 0 {
			w.waitFor(ctx, w.slots.freed, nil, time.Second)
			continue
		}
		if w.disk.low() != "" { // claims held are finished; none is added (disk.go)
			w.waitFor(ctx, w.disk.resumed, nil, time.Second)
			continue
		}
		// While writes fail, only a probe is claimed (writeguard.go).
		if lim, wait := w.writes.claimLimit(); lim == 0 {
			w.waitFor(ctx, w.writes.resumed, nil, wait)
			continue
		} else if lim > 0 {
			n = min(n, lim)
		}
		last = time.Now()
		// Fair shares (frontier.Claimant): this worker claims again once
		// threshold slots are free, so a claim that leaves that many unmet
		// leaves it wanting.
		claims, wait, err := w.front.ClaimAs(ctx, frontier.Claimant{ID: w.cfg.ID, Hungry: threshold}, n, w.cfg.Lease)
		w.metrics.front.ObserveClaim(time.Since(last))
		if err != nil {
			if ctx.Err() == nil {
				w.log.Error("claim failed", "err", err)
			}
			w.waitFor(ctx, nil, nil, time.Second)
			continue
		}
		// A claim of a paused target goes back at once (control.go); the
		// claims kept are fewer than n, so the dispatcher waits a moment.
		claims = w.holdPaused(ctx, claims)
		w.slots.take(len(claims))
		w.held.add(claims)
		for _, c := range claims {
			work <- c // buffered for every slot: never blocks
		}
		if len(claims) == n {
			idle = w.idleMin
			continue
		}
		switch {
		case wait == frontier.Idle && w.slots.available() < 2*w.cfg.Threads:
			// Nothing is ready, but this worker's claims keep their hosts
			// busy: the next completion can make one ready again (a host at
			// its parallelQueues), and no admission need follow to say so.
			// Claim again after a completion, at most every minClaimGap.
			w.waitFor(ctx, w.wake, w.slots.freed, idle)
			idle = min(2*idle, w.idleMax)
			w.waitFor(ctx, nil, nil, time.Until(last.Add(minClaimGap)))
		case wait == frontier.Idle:
			w.waitFor(ctx, w.wake, nil, idle)
			idle = min(2*idle, w.idleMax)
		default:
			idle = w.idleMin
			w.waitFor(ctx, w.wake, nil, min(max(wait, minClaimGap), time.Second))
		}
	}
}

// minClaimGap spaces claim calls that found too little, so a busy worker
// does not call the frontier once per finished URI.
const minClaimGap = 5 * time.Millisecond

// waitFor waits for d, a signal on a or b (nil: none) or the end of ctx.
func (w *Worker) waitFor(ctx context.Context, a, b <-chan struct{}, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-a:
	case <-b:
	case <-t.C:
	}
}

// nudge tells the dispatcher new URIs were admitted.
func (w *Worker) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// thread crawls claims from work. Claims still waiting when ctx ends go
// back to the frontier uncrawled, as do those waiting while writes fail
// (but a probe: writeguard.go); a claim being crawled is finished under
// workCtx, which outlives ctx.
func (w *Worker) thread(ctx, workCtx context.Context, work <-chan *frontier.Claim, id int) {
	var unstarted []*frontier.Claim
	for c := range work {
		if ctx.Err() != nil {
			unstarted = append(unstarted, c)
			continue
		}
		if !w.writes.start() {
			w.release(workCtx, c, "writes failing") // the host was not contacted
			continue
		}
		w.crawl(workCtx, c, id)
	}
	if len(unstarted) > 0 {
		if err := w.front.Release(context.WithoutCancel(ctx), unstarted); err != nil {
			w.log.Warn("return unstarted claims; their leases will expire", "claims", len(unstarted), "err", err)
		}
		for _, c := range unstarted {
			w.done(c)
		}
	}
}

// done forgets a settled claim and frees its slot.
func (w *Worker) done(c *frontier.Claim) {
	w.held.remove(c)
	w.slots.release()
}

// renewLoop keeps the leases of all outstanding claims alive, one script
// call per round.
func (w *Worker) renewLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			cs := w.held.list()
			lost, err := w.front.Renew(ctx, cs, w.cfg.Lease)
			if err != nil {
				w.log.Warn("renew leases", "claims", len(cs), "err", err)
				continue
			}
			for _, c := range lost {
				w.log.Warn("lease expired while crawling; the URI was returned to the frontier", "url", c.Launch.URL, "lease", c.Lease())
			}
		}
	}
}

func (w *Worker) reapLoop(ctx context.Context) {
	t := time.NewTicker(max(w.cfg.Lease/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := w.front.Reap(ctx); err != nil {
				w.log.Warn("reap leases", "err", err)
			} else if w.metrics.front.LeasesExpired(n); n > 0 {
				w.log.Warn("returned URIs whose lease expired (crashed worker?)", "uris", n)
			}
		}
	}
}

// budget applies the crawl limits (maxDocumentsDownload,
// maxBytesDownload, maxNovelUrls, maxNovelBytes, maxTimeSeconds) before a
// claim of n: it returns how many URIs may be claimed, and the limit once
// one is reached, after which the worker claims nothing more. The totals
// are the frontier's, crawl-wide, and the time counts from the crawl's
// start in Redis (Frontier.CrawlStart), so every worker stops at the same
// crawl time however late it started. Under maxDocumentsDownload and
// maxNovelUrls it claims no more than the URIs still allowed, less those
// outstanding, so the crawl stops close to the limit.
func (w *Worker) budget(ctx context.Context, n int) (int, string) {
	// A terminate (control.go) stops claims as a limit does, limits or not.
	if limit := w.LimitReached(); limit != "" {
		return 0, limit
	}
	l := w.prof.Limits
	if l == (profile.Limits{}) {
		return n, ""
	}
	t, err := w.front.Totals(ctx)
	if err != nil {
		w.log.Warn("read crawl totals for the limits", "err", err)
		return 0, ""
	}
	if limit := frontier.LimitReached(l, t, time.Since(w.started)); limit != "" {
		w.limitMu.Lock()
		w.limit = limit
		w.limitMu.Unlock()
		w.log.Info("crawl limit reached: no more URIs are claimed; the rest stay queued", "limit", limit,
			"documents", t.Downloaded, "bytes", t.Bytes)
		return 0, limit
	}
	outstanding := 2*w.cfg.Threads - w.slots.available()
	if l.MaxDocumentsDownload > 0 {
		n = min(n, int(l.MaxDocumentsDownload-t.Downloaded)-outstanding)
	}
	if l.MaxNovelUrls > 0 {
		n = min(n, int(l.MaxNovelUrls-t.Novel)-outstanding)
	}
	return max(n, 0), ""
}

// LimitReached returns the crawl limit that stopped this worker claiming,
// or "" while none has.
func (w *Worker) LimitReached() string {
	w.limitMu.Lock()
	defer w.limitMu.Unlock()
	return w.limit
}

// isRevisit reports a revisit by its annotation (duplicate:digest,
// duplicate:server-not-modified), as the recently-crawled DB and the CDX
// writer read it: a revisit is not novel (maxNovelUrls, maxNovelBytes).
func isRevisit(notes []string) bool {
	for _, n := range notes {
		if strings.HasPrefix(n, "duplicate:") {
			return true
		}
	}
	return false
}
