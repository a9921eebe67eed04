package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A worker's identity names its files: the {host} part of its WARC names,
// its crawl.log directory and its spool directory. Workers that share a data
// directory (compose replicas on one volume) must never share an identity,
// or they would write, recover and rename each other's files. So, unless
// the caller owns the whole data directory (Config.IdentityLease 0, as
// standalone with its LOCK file), an identity is held through a Redis lease
// for as long as the worker runs:
//
//   - --worker-id (explicit) or --worker-ordinal (a StatefulSet ordinal or
//     a replica number, identity "w<N>") names it; a process started while
//     that identity is leased by a live worker refuses to start.
//   - otherwise the worker takes the lowest free slot w0, w1, ... of its
//     stream, so replicas get distinct identities that stay stable across
//     restarts (a restarted replica usually gets its old slot back, and its
//     files with it).
//
// The lease is SET NX PX, renewed every third of its time and deleted on a
// clean stop. A janitor (janitor.go) recovering a dead identity's files
// holds the same key, marked as a janitor's, so no worker takes the
// identity while its files are being repaired.

// identitySlots bounds the slots a worker tries: far more replicas than any
// stream runs.
const identitySlots = 1024

// Lease holders are "worker ..." or "janitor ...", then host, pid and a
// random token, so an error can say who holds an identity.
const (
	holderWorker  = "worker"
	holderJanitor = "janitor"
)

// validIdentity is what may name files: the {host} part of a WARC name and
// a directory name.
var validIdentity = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// ordinalSuffix is the ordinal at the end of a StatefulSet pod's hostname
// ("trawler-worker-npld-2").
var ordinalSuffix = regexp.MustCompile(`-(\d+)$`)

var (
	renewLease = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)
	releaseLease = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) end
return 0`)
)

// ErrIdentityLost ends a worker whose identity lease was taken over (it
// expired while Redis was unreachable, and another process took it): the
// new holder may recover or write the same files, so writing on is unsafe.
var ErrIdentityLost = errors.New("worker identity lease lost")

// identityKey is the Redis key leasing identity id of the stream name.
func identityKey(name, id string) string { return "trawler:identity:{" + name + "}:" + id }

// slotID is the identity of slot or ordinal n.
func slotID(n int) string { return "w" + strconv.Itoa(n) }

// ordinal resolves --worker-ordinal: a number, or "hostname" for the
// trailing -N of the host name (a StatefulSet pod's); -1 when unset.
func ordinal(spec string) (int, error) {
	if spec == "" {
		return -1, nil
	}
	s := spec
	if spec == "hostname" {
		host, err := os.Hostname()
		if err != nil {
			return -1, fmt.Errorf("worker ordinal from hostname: %w", err)
		}
		m := ordinalSuffix.FindStringSubmatch(host)
		if m == nil {
			return -1, fmt.Errorf("worker ordinal from hostname: %q does not end in -N (not a StatefulSet pod?)", host)
		}
		s = m[1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n >= identitySlots {
		return -1, fmt.Errorf("worker ordinal %q: want 0..%d or hostname", spec, identitySlots-1)
	}
	return n, nil
}

// lease is a held identity lease, renewed in the background until release.
type lease struct {
	rdb   redis.UniversalClient
	key   string
	value string
	ttl   time.Duration
	log   *slog.Logger

	lost     chan struct{} // closed when the lease was found taken over
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// holderValue is a fresh lease value of the given kind.
func holderValue(kind string) string {
	host, _ := os.Hostname()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s %s %d %s", kind, host, os.Getpid(), hex.EncodeToString(b))
}

// tryLease takes key with SET NX PX; nil, nil when someone holds it.
func tryLease(ctx context.Context, rdb redis.UniversalClient, key, kind string, ttl time.Duration, log *slog.Logger) (*lease, error) {
	l := &lease{rdb: rdb, key: key, value: holderValue(kind), ttl: ttl, log: log,
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	ok, err := rdb.SetNX(ctx, key, l.value, ttl).Result()
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", key, err)
	}
	if !ok {
		return nil, nil
	}
	go l.renew()
	return l, nil
}

// renew extends the lease every third of its time. A renewal that finds
// another value (or none) means the lease expired and may have been taken:
// the holder is told through lost. Redis errors are retried; the lease is
// only lost when Redis says so.
func (l *lease) renew() {
	defer close(l.done)
	t := time.NewTicker(l.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.ttl/3)
		n, err := renewLease.Run(ctx, l.rdb, []string{l.key}, l.value, l.ttl.Milliseconds()).Int()
		cancel()
		switch {
		case err != nil:
			l.log.Warn("renew identity lease", "key", l.key, "err", err)
		case n == 0:
			l.log.Error("identity lease lost: another process may hold it now", "key", l.key)
			close(l.lost)
			return
		}
	}
}

// release stops renewal and deletes the lease if it is still ours.
func (l *lease) release() error {
	if l == nil {
		return nil
	}
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := releaseLease.Run(ctx, l.rdb, []string{l.key}, l.value).Err(); err != nil {
		return fmt.Errorf("release lease %s: %w", l.key, err)
	}
	return nil
}

// Lost is closed when the lease was taken over; nil for an unleased
// identity, which is never lost.
func (l *lease) Lost() <-chan struct{} {
	if l == nil {
		return nil
	}
	return l.lost
}

// acquireIdentity resolves the worker's identity as the package comment
// says and returns it with its lease (nil when cfg.IdentityLease is 0: the
// caller owns the data directory and cfg.ID is used as given).
func acquireIdentity(ctx context.Context, rdb redis.UniversalClient, cfg Config, log *slog.Logger) (string, *lease, error) {
	if cfg.IdentityLease <= 0 {
		if cfg.ID == "" {
			return "", nil, errors.New("worker identity: an unleased worker (identity lease 0) needs an ID")
		}
		return cfg.ID, nil, nil
	}
	if rdb == nil {
		return "", nil, errors.New("worker identity: a Redis client is needed to lease one")
	}
	n, err := ordinal(cfg.Ordinal)
	if err != nil {
		return "", nil, err
	}
	switch {
	case cfg.ID != "":
		l, err := leaseNamed(ctx, rdb, cfg, cfg.ID, log)
		return cfg.ID, l, err
	case n >= 0:
		l, err := leaseNamed(ctx, rdb, cfg, slotID(n), log)
		return slotID(n), l, err
	}
	for i := range identitySlots {
		id := slotID(i)
		l, err := tryLease(ctx, rdb, identityKey(cfg.Name(), id), holderWorker, cfg.IdentityLease, log)
		if err != nil {
			return "", nil, fmt.Errorf("worker identity: %w", err)
		}
		if l != nil {
			log.Info("worker identity leased", "identity", id, "source", "slot")
			return id, l, nil
		}
	}
	return "", nil, fmt.Errorf("worker identity: all %d slots of %s are leased", identitySlots, cfg.Name())
}

// leaseNamed leases an identity given by flag. A janitor holding it is
// repairing a dead run's files, which takes seconds: wait for it (up to
// twice the lease time). A worker holding it is a live process with the
// same identity: refuse, since the two would write and recover the same
// files.
func leaseNamed(ctx context.Context, rdb redis.UniversalClient, cfg Config, id string, log *slog.Logger) (*lease, error) {
	if !validIdentity.MatchString(id) {
		return nil, fmt.Errorf("worker identity %q: want letters, digits, '.', '_' or '-' (it names files)", id)
	}
	key := identityKey(cfg.Name(), id)
	deadline := time.Now().Add(2 * cfg.IdentityLease)
	for {
		l, err := tryLease(ctx, rdb, key, holderWorker, cfg.IdentityLease, log)
		if err != nil {
			return nil, fmt.Errorf("worker identity: %w", err)
		}
		if l != nil {
			log.Info("worker identity leased", "identity", id, "source", "flag")
			return l, nil
		}
		holder, err := rdb.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			continue // released between SET NX and GET
		}
		if err != nil {
			return nil, fmt.Errorf("worker identity %q: %w", id, err)
		}
		if !strings.HasPrefix(holder, holderJanitor+" ") || time.Now().After(deadline) {
			ttl, _ := rdb.PTTL(ctx, key).Result()
			return nil, fmt.Errorf("worker identity %q of %s is already leased by a live process (%s; lease %s expires in %v "+
				"unless renewed): refusing to start, which would corrupt its WARC files; give this worker another --worker-id",
				id, cfg.Name(), holder, key, ttl.Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("worker identity %q: %w", id, ctx.Err())
		case <-time.After(100 * time.Millisecond): // polling the janitor's lease
		}
	}
}

// ID is the worker's identity, settled by New (identity.go): callers
// name their Kafka client or logs with it.
func (w *Worker) ID() string { return w.cfg.ID }
