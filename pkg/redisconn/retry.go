package redisconn

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// NotRun tells the errors of a command that never ran: its server refused
// the connection (down) or was not serving (restarting, loading its data,
// rejoining a cluster). Sending such a command again cannot apply it
// twice; errors after a command may have run (a connection lost
// mid-reply) are not among them.
func NotRun(err error) bool {
	for _, p := range []string{"CLUSTERDOWN", "LOADING", "TRYAGAIN", "MASTERDOWN"} {
		if redis.HasErrorPrefix(err, p) {
			return true
		}
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// Retry runs fn until it succeeds, fails with an error other than NotRun's,
// or ctx ends, or its server has shown no sign of life for
// DefaultOpenTimeout: as Open waits, a server answering LOADING (or a
// cluster that does not serve yet) is alive, and the wait is logged
// every LoadingLogInterval with what. It is for a role's start, whose
// first writes meet a Redis that came back just after Open returned.
func Retry(ctx context.Context, log *slog.Logger, what string, fn func() error) error {
	return retry(ctx, log, what, DefaultOpenTimeout, fn)
}

func retry(ctx context.Context, log *slog.Logger, what string, stall time.Duration, fn func() error) error {
	delay := 50 * time.Millisecond
	alive := time.Now()
	var logged time.Time
	for {
		err := fn()
		if err == nil || !NotRun(err) {
			return err
		}
		if !errors.As(err, new(*net.OpError)) {
			alive = time.Now() // the server answered: loading, or its cluster not serving
		} else if time.Since(alive) > stall {
			return err
		}
		if log != nil && time.Since(logged) >= LoadingLogInterval {
			log.Info("waiting for redis", "for", what, "err", err)
			logged = time.Now()
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(2*delay, time.Second)
	}
}
