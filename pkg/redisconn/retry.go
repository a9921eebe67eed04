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
	w := &waiting{stall: stall, log: log, alive: time.Now()}
	_, _, err := w.run(ctx, func() (bool, bool, error) {
		err := fn()
		return err != nil && NotRun(err), !errors.As(err, new(*net.OpError)), err // a dial error is silence
	}, func(err error, _ bool) bool {
		if log == nil {
			return false
		}
		log.Info("waiting for redis", "for", what, "err", err)
		return true
	})
	return err
}
