package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/identity"
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
// The lease (pkg/identity) is SET NX PX, renewed every sixth of its time
// and deleted on a clean stop; a worker that could not renew it for five
// sixths of its time gives the identity up (ErrIdentityLost) before the
// lease can expire and be taken. A janitor (janitor.go) recovering a dead
// identity's files holds the same key, marked as a janitor's, so no worker
// takes the identity while its files are being repaired.

// Lease holders are "worker ..." or "janitor ..." (pkg/identity).
const (
	holderWorker  = "worker"
	holderJanitor = identity.KindJanitor
)

// identityPrefix prefixes the slot and ordinal identities: w0, w1, ...
const identityPrefix = "w"

// validIdentity is what may name files: the {host} part of a WARC name and
// a directory name.
var validIdentity = regexp.MustCompile(identity.Pattern)

// ordinalSuffix is the ordinal at the end of a StatefulSet pod's hostname
// ("trawler-worker-npld-2").
var ordinalSuffix = regexp.MustCompile(`-(\d+)$`)

// ErrIdentityLost ends a worker whose identity lease was taken over, or
// could not be renewed in time and is about to expire (Redis unreachable,
// or the worker starved of CPU): another process may take it then and
// recover or write the same files, so writing on is unsafe.
var ErrIdentityLost = errors.New("worker identity lease lost")

// identityKey is the Redis key leasing identity id of the stream name.
func identityKey(name, id string) string { return identity.Key(name, id) }

// slotID is the identity of slot or ordinal n.
func slotID(n int) string { return identity.SlotID(identityPrefix, n) }

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
	if err != nil || n < 0 || n >= identity.Slots {
		return -1, fmt.Errorf("worker ordinal %q: want 0..%d or hostname", spec, identity.Slots-1)
	}
	return n, nil
}

// lease is a held identity lease (pkg/identity), renewed in the background
// until release; a nil *lease is an unleased identity.
type lease struct{ l *identity.Lease }

// tryLease takes key with SET NX PX; nil, nil when someone holds it.
func tryLease(ctx context.Context, rdb redis.UniversalClient, key, kind string, ttl time.Duration, log *slog.Logger) (*lease, error) {
	l, err := identity.Try(ctx, rdb, key, kind, ttl, log)
	if l == nil {
		return nil, err
	}
	return &lease{l: l}, err
}

// release stops renewal and deletes the lease if it is still ours.
func (l *lease) release() error {
	if l == nil {
		return nil
	}
	return l.l.Release()
}

// Lost is closed when the lease was taken over; nil for an unleased
// identity, which is never lost.
func (l *lease) Lost() <-chan struct{} {
	if l == nil {
		return nil
	}
	return l.l.Lost()
}

// identityOptions are the worker's lease options for cfg.
func identityOptions(cfg Config, log *slog.Logger) identity.Options {
	return identity.Options{Scope: cfg.Name(), Kind: holderWorker, Flag: "--worker-id", TTL: cfg.IdentityLease, Logger: log}
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
	o := identityOptions(cfg, log)
	id := cfg.ID
	if id == "" && n >= 0 {
		id = slotID(n)
	}
	if id != "" {
		l, err := identity.Named(ctx, rdb, o, id)
		if err != nil {
			return "", nil, err
		}
		return id, &lease{l: l}, nil
	}
	id, l, err := identity.Slot(ctx, rdb, o, identityPrefix)
	if err != nil {
		return "", nil, err
	}
	return id, &lease{l: l}, nil
}

// ID is the worker's identity, settled by New (identity.go): callers
// name their Kafka client or logs with it.
func (w *Worker) ID() string { return w.cfg.ID }
