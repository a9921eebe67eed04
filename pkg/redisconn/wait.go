package redisconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// OpenOption changes how Open and OpenUniversal wait for Redis.
type OpenOption func(*waiting)

// WithLogger reports a long wait: every LoadingLogInterval while Redis
// loads its data, how far it has got.
func WithLogger(l *slog.Logger) OpenOption { return func(w *waiting) { w.log = l } }

// LoadingLogInterval is how often a wait on a loading Redis is logged.
const LoadingLogInterval = 10 * time.Second

// withStall sets how long a wait may go without a sign of life (tests).
func withStall(d time.Duration) OpenOption { return func(w *waiting) { w.stall = d } }

// waiting is one Open's wait for its servers (every node of a cluster).
type waiting struct {
	// stall is how long the wait may go without a sign of life from any
	// of its servers; zero leaves the bound to the context's deadline.
	stall time.Duration
	log   *slog.Logger
	// alive is the last sign of life: the start, a LOADING answer, or a
	// cluster node's answer that its cluster is not serving yet.
	alive time.Time
}

func newWaiting(ctx context.Context, opts []OpenOption) *waiting {
	w := &waiting{alive: time.Now()}
	if _, ok := ctx.Deadline(); !ok {
		w.stall = DefaultOpenTimeout
	}
	for _, o := range opts {
		o(w)
	}
	return w
}

// ready retries probe with a doubling backoff (capped at one second)
// until it succeeds, fails permanently, ctx ends, or the servers have
// shown no sign of life for the stall time. A LOADING answer is one, so a
// server replaying a large append-only file is waited for however long
// that takes; so is a cluster node's answer that its cluster is not
// serving (a master that is loading makes the others report
// cluster_state:fail). Long waits are logged every LoadingLogInterval.
// check, when not nil, is a further test of the answering server.
func (w *waiting) ready(ctx context.Context, opts redis.Options, check func(context.Context, *redis.Client) error) error {
	var forming errClusterForming
	attempts, cause, err := w.run(ctx, func() (bool, bool, error) {
		err := probe(ctx, opts, check)
		if err == nil || permanent(err) {
			return false, false, err
		}
		return true, redis.HasErrorPrefix(err, "LOADING") || errors.As(err, &forming), err
	}, func(err error, alive bool) bool {
		switch {
		case w.log == nil || !alive:
			return false
		case redis.HasErrorPrefix(err, "LOADING"):
			w.log.Info("waiting for redis to load its data", "addr", opts.Addr, "progress", loadingProgress(ctx, opts))
		default:
			w.log.Info("waiting for the redis cluster to serve", "addr", opts.Addr, "state", forming.state)
		}
		return true
	})
	switch {
	case err == nil:
		return nil
	case cause == nil:
		return fmt.Errorf("ping: %w", err)
	case errors.Is(cause, errStalled):
		return fmt.Errorf("not answering after %d attempts in %s (last error: %w)", attempts, w.stall, err)
	}
	return fmt.Errorf("not answering after %d attempts: %w (last error: %w)", attempts, cause, err)
}

// errStalled is run's cause when the stall time passed without a sign of
// life.
var errStalled = errors.New("no sign of life")

// run calls attempt with a doubling backoff (50 ms, capped at one second)
// while it asks to retry, and returns how many attempts it made, why it
// stopped retrying, and the last error. The cause is nil when attempt did
// not ask to (it succeeded, or its error is final), errStalled when the
// stall time passed without a sign of life (an attempt's alive, or the
// start), or ctx's error. note is offered every retried error at most every
// LoadingLogInterval, and says whether it logged.
func (w *waiting) run(ctx context.Context, attempt func() (retry, alive bool, err error),
	note func(err error, alive bool) bool) (attempts int, cause, err error) {
	delay := 50 * time.Millisecond
	var logged time.Time
	for n := 1; ; n++ {
		retry, alive, err := attempt()
		if !retry {
			return n, nil, err
		}
		if alive {
			w.alive = time.Now()
		} else if w.stall > 0 && time.Since(w.alive) > w.stall {
			return n, errStalled, err
		}
		if time.Since(logged) >= LoadingLogInterval && note(err, alive) {
			logged = time.Now()
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return n, ctx.Err(), err
		case <-t.C:
		}
		delay = min(2*delay, time.Second)
	}
}

// loadingProgress is a loading server's own account of its progress
// (INFO persistence, which it answers while loading), for the log.
func loadingProgress(ctx context.Context, opts redis.Options) string {
	opts.MaxRetries = -1
	c := redis.NewClient(&opts)
	defer func() { _ = c.Close() }()
	info, err := c.Info(ctx, "persistence").Result()
	if err != nil {
		return "unknown: " + err.Error()
	}
	var parts []string
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "loading_loaded_perc" || k == "loading_eta_seconds") {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}
