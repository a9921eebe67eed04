package identity

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/internal/testwait"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

var errCut = errors.New("cut off from redis (test)")

// cutoff cuts one client's connections to Redis while Redis serves
// everyone else, as a network partition or a stalled process would: the
// lease's time runs out in Redis, and others can take it.
type cutoff struct{ cut atomic.Bool }

// client is a Redis client whose connections the cutoff controls.
func (c *cutoff) client(t *testing.T, addr string) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: addr,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if c.cut.Load() {
				return nil, errCut
			}
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return cutConn{Conn: conn, c: c}, nil
		}})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

type cutConn struct {
	net.Conn
	c *cutoff
}

func (k cutConn) Read(b []byte) (int, error) {
	if k.c.cut.Load() {
		return 0, errCut
	}
	return k.Conn.Read(b)
}

func (k cutConn) Write(b []byte) (int, error) {
	if k.c.cut.Load() {
		return 0, errCut
	}
	return k.Conn.Write(b)
}

// A holder cut off from Redis for a while (two renewals) keeps its lease;
// cut off for longer, it gives the identity up (Lost) while the lease
// still stands in Redis, before another process can take it. Before, it
// learnt of the lapse only from a renewal that reached Redis, writing on
// as that identity meanwhile, however long the cut lasted.
func TestLeaseGivenUpBeforeItExpires(t *testing.T) {
	_, rdb := embeddedtest.RedisServer(t, t.TempDir()) // real expiry: miniredis's clock does not run
	ctx := context.Background()
	var c cutoff
	// The sixth of the lease between giving up and expiry is the time the
	// check after Lost has to run in, on a loaded machine too.
	const ttl = 6 * time.Second
	log, logged := testlog.New(slog.LevelWarn)
	l, err := Try(ctx, c.client(t, rdb.Options().Addr), "k", "tester", ttl, log)
	if err != nil || l == nil {
		t.Fatal(l, err)
	}
	t.Cleanup(func() { c.cut.Store(false); _ = l.Release() })

	// A short cut, two failed renewals long: the renewals after it extend
	// the lease again.
	c.cut.Store(true)
	testwait.Until(t, ttl/2, "two renewals failing", func() bool {
		return strings.Count(logged.String(), `msg="renew identity lease"`) >= 2
	})
	left, err := rdb.PTTL(ctx, "k").Result()
	if err != nil {
		t.Fatal(err)
	}
	c.cut.Store(false)
	// Unrenewed, the lease's time only goes down.
	testwait.Until(t, ttl/2, "the lease renewed after the short cut", func() bool {
		pttl, err := rdb.PTTL(ctx, "k").Result()
		return err == nil && pttl > left
	})
	select {
	case <-l.Lost():
		t.Fatalf("a short cut lost the lease:\n%s", logged)
	default:
	}

	// A long cut: given up before the lease expires.
	c.cut.Store(true)
	select {
	case <-l.Lost():
	case <-time.After(2 * ttl):
		t.Fatal("a holder cut off from Redis for twice its lease time did not give it up")
	}
	pttl, err := rdb.PTTL(ctx, "k").Result()
	if err != nil || pttl <= 0 {
		t.Errorf("lease gone from Redis (PTTL %v, %v) when its holder gave it up: another could have taken it", pttl, err)
	}
	if taken, err := rdb.SetNX(ctx, "k", "another", ttl).Result(); err != nil || taken {
		t.Errorf("another process took the lease as its holder gave it up (%v)", err)
	}
}
