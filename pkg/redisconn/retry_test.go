package redisconn

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// redisErr is a server's error reply, as go-redis returns it.
type redisErr string

func (e redisErr) Error() string { return string(e) }
func (redisErr) RedisError()     {}

var refused = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}

func TestNotRun(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{redisErr("LOADING Redis is loading the dataset in memory"), true},
		{redisErr("CLUSTERDOWN The cluster is down"), true},
		{redisErr("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{redisErr("MASTERDOWN Link with MASTER is down"), true},
		{refused, true},
		{io.EOF, false}, // the reply was lost: the command may have run
		{&net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset")}, false},
		{redisErr("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{nil, false},
	} {
		if got := NotRun(tc.err); got != tc.want {
			t.Errorf("NotRun(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// Retry sends again what never ran; a server that answers (LOADING) is
// waited for past the stall bound, silence is not; other errors and a
// cancelled context end it at once.
func TestRetry(t *testing.T) {
	ctx := context.Background()
	const stall = 100 * time.Millisecond
	calls := 0
	err := retry(ctx, nil, "test", 10*time.Second, func() error {
		if calls++; calls < 4 {
			return refused
		}
		return nil
	})
	if err != nil || calls != 4 {
		t.Fatalf("refused three times, then served: %v after %d calls", err, calls)
	}

	began := time.Now()
	err = retry(ctx, nil, "test", stall, func() error {
		if time.Since(began) < 4*stall {
			return redisErr("LOADING Redis is loading the dataset in memory")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("loading for four stall bounds: %v", err)
	}

	began = time.Now()
	if err := retry(ctx, nil, "test", stall, func() error { return refused }); !errors.Is(err, refused) || time.Since(began) > 5*time.Second {
		t.Fatalf("silence: %v after %s", err, time.Since(began))
	}
	calls = 0
	if err := retry(ctx, nil, "test", stall, func() error { calls++; return io.EOF }); err != io.EOF || calls != 1 {
		t.Fatalf("a lost reply: %v after %d calls, want it at once", err, calls)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := retry(cctx, nil, "test", time.Hour, func() error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("cancelled: %v", err)
	}
}
