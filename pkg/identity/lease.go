// Package identity leases the identities of processes that share a data
// directory. An identity names a process's files (the {host} part of its
// WARC names, its crawl.log and spool directories), so two live processes
// must never hold the same one, or they would write, recover and rename
// each other's files. An identity is held through a Redis lease (SET NX
// PX) renewed every sixth of its time, deleted on a clean stop, and
// reported lost when a renewal finds another holder, or when no renewal
// has succeeded for five sixths of the lease time: the holder gives the
// identity up while its lease still stands, before anyone can take it.
//
// A process takes either a named identity (Named: an explicit flag, a
// StatefulSet ordinal), refused while a live process holds it, or the
// lowest free slot of a prefix (Slot: w0, w1, ... for workers, r0, r1, ...
// for renderers), so replicas get distinct identities that stay stable
// across restarts. A janitor (Sweep) recovering a dead identity's files
// holds the same key, marked as a janitor's, so that nobody takes the
// identity while its files are being repaired.
package identity

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
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Slots bounds the slots Slot tries: far more replicas than any stream
// runs.
const Slots = 1024

// KindJanitor marks a lease held by a janitor repairing a dead identity's
// files. Holders' lease values are "<kind> <host> <pid> <token>", so an
// error can say who holds an identity.
const KindJanitor = "janitor"

// Pattern is what may be an identity: it names files (the {host} part of a
// WARC name) and directories.
const Pattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`

// ErrLost is the cause a process reports when its identity lease was taken
// over, or could not be renewed in time (Redis unreachable, or the process
// or Redis starved of CPU) and is about to expire: another process may
// take it then and recover or write the same files, so writing on is
// unsafe.
var ErrLost = errors.New("identity lease lost")

// The scripts change a lease only while it still holds our value, so a
// process whose lease expired never extends or deletes its successor's.
var (
	renewScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)
	releaseScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) end
return 0`)
	validID = regexp.MustCompile(Pattern)
)

// Valid reports whether id may be an identity (Pattern).
func Valid(id string) bool { return validID.MatchString(id) }

// Key is the Redis key leasing identity id within scope (a stream's name,
// "fc-npld"; the renderers', "fc-npld-render"). The scope is a hash tag,
// so a scope's keys share a cluster slot.
func Key(scope, id string) string { return "trawler:identity:{" + scope + "}:" + id }

// SlotID is the identity of slot n with prefix: "w3", "r0".
func SlotID(prefix string, n int) string { return prefix + strconv.Itoa(n) }

// Lease is a held lease, renewed in the background until Release. Its
// methods are safe for concurrent use; a nil *Lease is an unleased
// identity, which is never lost and whose Release does nothing.
type Lease struct {
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

// Try takes key with SET NX PX for a holder of the given kind and starts
// renewing it; nil, nil when someone holds it.
func Try(ctx context.Context, rdb redis.UniversalClient, key, kind string, ttl time.Duration, log *slog.Logger) (*Lease, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Lease{rdb: rdb, key: key, value: holderValue(kind), ttl: ttl, log: log,
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	sent := time.Now() // Redis counts the lease time from later than this
	ok, err := rdb.SetNX(ctx, key, l.value, ttl).Result()
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", key, err)
	}
	if !ok {
		return nil, nil
	}
	go l.renew(sent)
	return l, nil
}

// The renewal schedule, in parts of the lease time. The holder gives the
// lease up (lost) once giveUpAfter has passed since the last renewal that
// succeeded was sent: Redis counts the lease time from when it ran that
// command, later still, so the rest of the lease is left for the holder to
// stop before anyone can take the identity (Kubernetes' leader election
// keeps its renew deadline short of the lease in the same way). Renewing
// every sixth leaves four tries or more before then, and a holder stalled
// (starved of CPU, or waiting on Redis) for up to two thirds of the lease
// keeps it, as it did when only a renewal finding the lease gone told it
// of a lapse. A try that gets no answer is given up after renewEvery and
// sent again at once; one that fails at once is sent again after
// retryPause.
func (l *Lease) renewEvery() time.Duration  { return l.ttl / 6 }
func (l *Lease) giveUpAfter() time.Duration { return l.ttl * 5 / 6 }
func (l *Lease) retryPause() time.Duration  { return l.ttl / 24 }

// renew extends the lease on the schedule above, from acquired (when the
// SET that took it was sent). A renewal that finds another value (or none)
// means the lease expired and may have been taken; renewals that all
// failed (Redis errors, no answer) until the give-up point mean it may
// expire soon. Either way the holder is told through lost, and renewal
// ends.
func (l *Lease) renew(acquired time.Time) {
	defer close(l.done)
	every := l.renewEvery()
	lastOK := acquired
	next := time.NewTimer(every)
	defer next.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-next.C:
		}
		giveUp := lastOK.Add(l.giveUpAfter())
		sent := time.Now()
		if !sent.Before(giveUp) {
			// Nothing ran here for that long: the process was starved.
			l.giveUp(lastOK, nil)
			return
		}
		// A late answer still counts from when the try was sent; one that
		// comes after the give-up point is no use.
		ctx, cancel := context.WithDeadline(context.Background(), minTime(sent.Add(every), giveUp))
		n, err := renewScript.Run(ctx, l.rdb, []string{l.key}, l.value, l.ttl.Milliseconds()).Int()
		cancel()
		switch {
		case err == nil && n == 0:
			l.log.Error("identity lease lost: another process may hold it now", "key", l.key)
			close(l.lost)
			return
		case err == nil:
			lastOK = sent
			next.Reset(time.Until(sent.Add(every)))
		case !time.Now().Before(giveUp):
			l.giveUp(lastOK, err)
			return
		default:
			l.log.Warn("renew identity lease", "key", l.key, "err", err)
			next.Reset(min(l.retryPause(), time.Until(giveUp)))
		}
	}
}

// giveUp reports the lease lost because it was not renewed in time.
func (l *Lease) giveUp(lastOK time.Time, err error) {
	l.log.Error("identity lease not renewed in time: giving the identity up before the lease can expire",
		"key", l.key, "since_renewed", time.Since(lastOK).Round(time.Millisecond), "lease", l.ttl, "err", err)
	close(l.lost)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Release stops renewal and deletes the lease if it is still ours.
func (l *Lease) Release() error {
	if l == nil {
		return nil
	}
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
	// The caller's context is usually the one that just ended the run, so
	// the delete gets a context of its own.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := releaseScript.Run(ctx, l.rdb, []string{l.key}, l.value).Err(); err != nil {
		return fmt.Errorf("release lease %s: %w", l.key, err)
	}
	return nil
}

// Lost is closed when the lease was taken over; nil (never ready) for an
// unleased identity.
func (l *Lease) Lost() <-chan struct{} {
	if l == nil {
		return nil
	}
	return l.lost
}
