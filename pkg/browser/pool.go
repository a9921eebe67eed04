package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
)

// Pool renders pages in one headless Chromium, at most Config.Tabs at once.
// Its methods are safe for concurrent use.
type Pool struct {
	cfg Config
	log *slog.Logger

	slots chan struct{} // one token per tab that may render
	done  chan struct{} // closed by Close, so waiting Renders give up

	// lock serialises launching, restarting and closing the browser. It is a
	// channel rather than a mutex so that a Render waiting for a restart can
	// still honour its context.
	lock   chan struct{}
	inst   *instance // nil after Close, or after a failed restart
	closed bool

	restarts atomic.Int64

	// mu orders running.Add against Close's running.Wait: once shut is set
	// no Render enters, so Wait never races with an Add from zero.
	mu      sync.Mutex
	shut    bool
	running sync.WaitGroup // Renders inside the pool, for Close to wait on
}

// enter registers a Render with the pool, unless the pool is closing.
func (p *Pool) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shut {
		return false
	}
	p.running.Add(1)
	return true
}

// New starts the browser and returns a pool that renders with it. ctx bounds
// only the start. It fails when the browser cannot start.
func New(ctx context.Context, cfg Config) (*Pool, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pool{
		cfg:   cfg,
		log:   cfg.Log,
		slots: make(chan struct{}, cfg.Tabs),
		done:  make(chan struct{}),
		lock:  make(chan struct{}, 1),
	}
	if cfg.ReapStale {
		ReapStale(cfg.DataDir, p.log)
	}
	in, err := p.launch(ctx)
	if err != nil {
		return nil, err
	}
	p.inst = in
	return p, nil
}

// Restarts returns how many times the browser was restarted because it crashed
// or hung.
func (p *Pool) Restarts() int64 { return p.restarts.Load() }

// Render renders one page in a fresh browser context. It waits for a free tab
// (honouring ctx), then gives the page Config.PageTimeout in all. Its error
// wraps ErrBrowserCrashed when the browser died or was restarted meanwhile, and
// context.DeadlineExceeded when the page ran out of time.
func (p *Pool) Render(ctx context.Context, pg Page) (*Result, error) {
	if err := validatePage(pg); err != nil {
		return nil, err
	}
	if pg.Settle <= 0 {
		pg.Settle = defaultSettle
	}
	if !p.enter() {
		return nil, ErrClosed
	}
	defer p.running.Done()
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	case <-ctx.Done():
		return nil, fmt.Errorf("browser: waiting for a tab: %w", ctx.Err())
	case <-p.done:
		return nil, ErrClosed
	}

	in, err := p.current(ctx)
	if err != nil {
		return nil, err
	}
	res, hung, err := p.render(ctx, in, pg)
	if err == nil {
		return res, nil
	}
	if hung {
		// The tab could not be closed: the browser was stuck, and render
		// restarted it.
		return nil, fmt.Errorf("%w: render %s: %w", ErrBrowserCrashed, pg.URL, err)
	}
	if in.dead() {
		if p.isClosed() {
			return nil, fmt.Errorf("%w: render %s: %w", ErrClosed, pg.URL, err)
		}
		p.restart(in, "browser died")
		return nil, fmt.Errorf("%w: render %s: %w", ErrBrowserCrashed, pg.URL, err)
	}
	return nil, fmt.Errorf("browser: render %s: %w", pg.URL, err)
}

// validatePage rejects pages that Chromium could not load, before they take a
// tab.
func validatePage(pg Page) error {
	u, err := url.Parse(pg.URL)
	if err != nil {
		return fmt.Errorf("browser: invalid page URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("browser: page URL %q: scheme must be http or https", pg.URL)
	}
	if u.Host == "" {
		return fmt.Errorf("browser: page URL %q has no host", pg.URL)
	}
	if pg.ProxyServer == "" {
		return errors.New("browser: Page.ProxyServer is required: every request of a page must go through its proxy")
	}
	if _, err := url.Parse(pg.ProxyServer); err != nil {
		return fmt.Errorf("browser: invalid ProxyServer: %w", err)
	}
	return nil
}

// acquire takes the pool's lock, honouring ctx.
func (p *Pool) acquire(ctx context.Context) error {
	select {
	case p.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Pool) release() { <-p.lock }

func (p *Pool) isClosed() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// current returns the running browser, starting a new one if the last one
// died while no page was rendering or if a restart failed.
func (p *Pool) current(ctx context.Context) (*instance, error) {
	if err := p.acquire(ctx); err != nil {
		return nil, fmt.Errorf("browser: waiting for the browser: %w", err)
	}
	defer p.release()
	if p.closed {
		return nil, ErrClosed
	}
	if p.inst != nil && !p.inst.dead() {
		return p.inst, nil
	}
	if p.inst != nil {
		p.log.Warn("browser died while idle; restarting", "pid", p.inst.pid)
		p.inst.stop()
		p.inst = nil
		p.restarts.Add(1)
	}
	in, err := p.launch(ctx)
	if err != nil {
		return nil, err
	}
	p.inst = in
	return in, nil
}

// restart replaces the browser old with a new one, unless another Render
// already did: concurrent renders that all saw old fail restart it once.
func (p *Pool) restart(old *instance, reason string) {
	// Not the caller's context: a restart for the pool must not be abandoned
	// half-way because one caller gave up.
	_ = p.acquire(context.Background())
	defer p.release()
	if p.closed || p.inst != old {
		old.stop() // harmless if already stopped
		return
	}
	p.log.Warn("restarting browser", "reason", reason, "pid", old.pid)
	old.stop()
	p.inst = nil
	p.restarts.Add(1)
	in, err := p.launch(context.Background())
	if err != nil {
		// The next Render tries again.
		p.log.Error("browser restart failed", "err", err)
		return
	}
	p.inst = in
}

// Close stops the browser and its helper processes, removes its profile
// directory and waits for Renders in progress to return. Render fails with
// ErrClosed afterwards.
func (p *Pool) Close() error {
	_ = p.acquire(context.Background())
	if p.closed {
		p.release()
		return nil
	}
	p.closed = true
	close(p.done)
	in := p.inst
	p.inst = nil
	p.release()
	p.mu.Lock()
	p.shut = true
	p.mu.Unlock()
	if in != nil {
		in.stop()
	}
	p.running.Wait()
	return nil
}
