//go:build chaos

package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/trawler-crawl/trawler/pkg/identity"
	"github.com/trawler-crawl/trawler/services/worker"
)

// The kinds of fault the suite injects.
const (
	faultWorkerKill    = "kill -9 worker"
	faultCDXKill       = "kill -9 cdxwriter"
	faultRedisKill     = "kill -9 redis-server (restart from AOF)"
	faultRedisWipe     = "kill -9 redis-server, data deleted (frontier rebuilt from the journal)"
	faultBrokerRestart = "broker restart"
	faultClamdStall    = "clamd stops answering"
	faultDiskFull      = "disk full (worker w2's tmpfs)"
)

// Fault durations: how long a stall, an outage or a full disk is held.
const (
	holdClamd  = 6 * time.Second
	holdBroker = 2 * time.Second
	holdDisk   = 6 * time.Second
)

// fault is one scheduled fault: it fires once the frontier's count of
// finished URIs reaches at, so a seed gives the same faults at the same
// points of the crawl's progress whatever the machine's speed.
type fault struct {
	kind   string
	at     int64
	victim int // worker index, for faultWorkerKill
}

func (f fault) String() string {
	if f.kind == faultWorkerKill {
		return fmt.Sprintf("%s w%d", f.kind, f.victim)
	}
	return f.kind
}

// schedule draws the faults of a run from seed: workerKills worker kills
// and one of each other kind, in an order drawn from the seed, placed
// between 5% and 75% of the expected URIs. The span is cut into one slot
// per fault and each fault falls at a point of its slot drawn from the
// seed: spread so, the faults never pile up at the end, where one held
// fault after another would let the crawl finish before the last struck.
func schedule(seed int64, expected int64, workerKills int) []fault {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6368616f73)) // "chaos"
	var fs []fault
	for range workerKills {
		fs = append(fs, fault{kind: faultWorkerKill, victim: rng.IntN(3)})
	}
	for _, k := range []string{faultCDXKill, faultRedisKill, faultRedisWipe, faultBrokerRestart, faultClamdStall, faultDiskFull} {
		fs = append(fs, fault{kind: k})
	}
	rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	lo, span := expected/20, expected*70/100
	slot := max(span/int64(len(fs)), 1)
	for i := range fs {
		fs[i].at = lo + int64(i)*slot + rng.Int64N(slot)
	}
	return fs
}

// inject applies f to the running cluster and returns the URIs in flight
// when it struck: the bound on URIs it may cause to be captured twice.
// A fault that strikes a crawl with nothing left to do tests nothing, so
// those are counted and fail the run (make the site bigger).
func (c *cluster) inject(f fault) int64 {
	if st, err := c.front.Stats(context.Background()); err == nil && st.Queued+st.InFlight == 0 {
		c.idleFaults = append(c.idleFaults, f.String())
	}
	t := c.t
	t.Helper()
	switch f.kind {
	case faultWorkerKill:
		n := c.inFlight()
		w := c.workers[f.victim]
		w.kill()
		c.waitIdentityFree(w.spec.ID)
		w.start(t)
		return n
	case faultCDXKill:
		// The cdxwriter's kill strands no URI: its batch is consumed
		// again from the last committed offset (idempotent puts).
		c.cdx.kill()
		c.cdx.start(t)
		return 0
	case faultRedisKill:
		n := c.inFlight()
		c.redis.kill(t)
		c.redis.start(t)
		return n
	case faultRedisWipe:
		return c.wipeRedis()
	case faultBrokerRestart:
		n := c.inFlight()
		if err := c.broker.k.Close(); err != nil {
			t.Fatalf("broker close: %v", err)
		}
		time.Sleep(holdBroker) // holding the outage, not waiting for a condition
		c.broker.start(t)
		return n
	case faultClamdStall:
		c.clamd.setStalled(true)
		time.Sleep(holdClamd) // holding the stall
		c.clamd.setStalled(false)
		return 0
	case faultDiskFull:
		free, err := fillDisk(c.diskDir, c.minFree/2)
		if err != nil {
			t.Fatalf("disk full: %v", err)
		}
		time.Sleep(holdDisk) // holding the full disk
		if err := free(); err != nil {
			t.Fatalf("free disk: %v", err)
		}
		return 0
	}
	t.Fatalf("unknown fault %q", f.kind)
	return 0
}

// wipeRedis loses Redis for good, as a lost volume does, and recovers
// with the rebuild docs/frontier.md gives for a lost Redis: stop the
// workers (so none claims from or admits into the empty frontier first),
// start an empty Redis, `trawler frontier rebuild` from the Kafka journal
// (worker.RebuildFrontier, what the command runs), start the workers.
// Every worker is killed, so the bound is everything in flight.
func (c *cluster) wipeRedis() int64 {
	t := c.t
	t.Helper()
	n := c.inFlight()
	for _, w := range c.workers {
		w.kill()
	}
	c.redis.kill(t)
	entries, err := os.ReadDir(c.redis.dir)
	if err != nil {
		t.Fatalf("redis data dir: %v", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(c.redis.dir, e.Name())); err != nil {
			t.Fatalf("delete redis data: %v", err)
		}
	}
	c.redis.start(t)
	p := crawlProfile("")
	j := worker.NewJournal(c.broker.config("chaos-rebuild"), workerConfig("", "x", 0), p.Crawl.Name, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	rep, err := worker.RebuildFrontier(ctx, c.rdb, c.front, j, p, false)
	if err != nil {
		t.Fatalf("frontier rebuild: %v", err)
	}
	c.logf("frontier rebuilt in %v: %d finished, %d admissions replayed, %d queued again, %d skipped, %d malformed",
		time.Since(start).Round(time.Millisecond), rep.Finished, rep.Admitted, rep.Queued, rep.Skipped, rep.Malformed)
	for _, w := range c.workers {
		w.start(t)
	}
	return n
}

// inFlight is how many URIs workers hold leases on right now (0 when
// Redis does not answer): a kill can make at most these be captured
// again, as their leases run out before their completion was recorded.
func (c *cluster) inFlight() int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.front.Stats(ctx)
	if err != nil {
		c.t.Fatalf("frontier stats before a fault: %v", err)
	}
	return st.InFlight
}

// waitIdentityFree waits for a killed worker's identity lease to expire,
// so its restart takes the same identity and recovers its .open files.
func (c *cluster) waitIdentityFree(id string) {
	key := identity.Key(workerConfig("", id, 0).Name(), id)
	c.poll("identity "+id+" released", 30*time.Second, func() bool {
		n, err := c.rdb.Exists(context.Background(), key).Result()
		return err == nil && n == 0
	})
}
