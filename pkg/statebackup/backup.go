package statebackup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/rdbsync"
)

// GroupTopic is a consumer group that must have caught up with a topic
// before the snapshots: the cdxwriter's with <crawl>.crawled, so the index
// and the recently-crawled DB hold every finished URI, and the workers'
// with the tocrawl topic, so no launch waits only in Kafka.
type GroupTopic struct {
	Group, Topic string
	// Index marks the group that fills the CDX index (the cdxwriter's):
	// after the Redis snapshot the backup waits until it has no lag before
	// it takes the checkpoint, so the index holds every URI the snapshot's
	// frontier had finished. The others are only waited for while
	// draining.
	Index bool
}

// BackupOptions configures Backup.
type BackupOptions struct {
	// Out is the backup directory to create; it must not exist.
	Out string
	// Masters are the Redis servers to snapshot: the one server, or every
	// master of a Redis Cluster.
	Masters []rdbsync.Options
	// Redis is a client of the same Redis (for the frontiers' pause and
	// counters and the server version).
	Redis redis.UniversalClient
	// Frontiers are paused for the snapshots (claims stop, fetches in
	// flight finish) and resumed after.
	Frontiers []*frontier.Frontier
	// Kafka, with Groups, is asked for consumer lag while draining; nil:
	// lag is not waited for.
	Kafka  *kadm.Client
	Groups []GroupTopic
	// DrainTimeout bounds the wait for in-flight URIs and lag; after it
	// the snapshots are taken anyway and the manifest records what was in
	// flight. Zero: 60s.
	DrainTimeout time.Duration
	// CatchUpTimeout bounds the wait, after the Redis snapshot, for the
	// index group to have no lag; past it the backup fails (an index
	// missing finished URIs would lose them). Zero: 5 minutes.
	CatchUpTimeout time.Duration
	// CDXURL is the base URL of the CDX index's API (cdxwriter or
	// standalone --cdx-addr); empty: no index in the backup.
	CDXURL   string
	CDXToken string
	HTTP     *http.Client
	// Version is the trawler version recorded in the manifest.
	Version string
	Logger  *slog.Logger
}

// Backup takes a consistent backup while the crawl runs:
//
//  1. it pauses the frontiers' claims (fetches in flight finish) and waits,
//     at most DrainTimeout, until nothing is in flight and the consumer
//     groups have caught up;
//  2. it starts each Redis snapshot and waits until every master has
//     forked for it: the frontier, the recently-crawled DB and the ledger
//     are now fixed;
//  3. it waits until the index group has no lag, so the index holds every
//     capture the snapshot's frontier had finished (each URI's crawled
//     event is published before the frontier records it finished), then
//     has the index take its checkpoint;
//  4. it resumes the claims (paused for the drain, the fork, the catch-up
//     and the checkpoint) and receives the snapshot and the checkpoint
//     while the crawl goes on.
//
// The copies then agree on what is finished, except for URIs in flight at
// the snapshot (none when drained): those are queued again by a restore and
// crawled again, and may also be in the index if they finished before the
// checkpoint. No claim is made between the snapshot and the checkpoint, so
// nothing else can be.
func Backup(ctx context.Context, o BackupOptions) (*Manifest, error) {
	start := time.Now()
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Out == "" || len(o.Masters) == 0 || o.Redis == nil {
		return nil, errors.New("backup: need an output directory, the Redis masters and a Redis client")
	}
	if _, err := os.Stat(o.Out); err == nil {
		return nil, fmt.Errorf("backup: %s exists; a backup never overwrites one", o.Out)
	}
	tmp := o.Out + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("backup: remove the unfinished %s: %w", tmp, err)
	}
	if err := os.MkdirAll(filepath.Join(tmp, "redis"), 0o755); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	m := &Manifest{Format: FormatVersion, Created: start.UTC(), TrawlerVersion: o.Version}
	for _, f := range o.Frontiers {
		m.Frontiers = append(m.Frontiers, f.Name())
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(tmp)
		}
	}()

	resume, err := pause(ctx, o.Frontiers, m)
	if err != nil {
		return nil, err
	}
	defer resume()
	pausedAt := time.Now()
	if err := drain(ctx, o, m, log); err != nil {
		return nil, err
	}
	snapCtx, cancelSnaps := context.WithCancel(ctx)
	defer cancelSnaps()
	snaps := startSnapshots(snapCtx, o.Masters, tmp)
	if err := snaps.waitForked(ctx); err != nil {
		return nil, err
	}
	var cdx *cdxTransfer
	if o.CDXURL != "" {
		if err := catchUp(ctx, o); err != nil {
			return nil, err
		}
		if cdx, err = startCheckpoint(ctx, o, tmp); err != nil {
			return nil, err
		}
		defer cdx.abort()
	}
	resume()
	m.Quiesce.PausedSecs = time.Since(pausedAt).Seconds()
	log.Info("claims resumed; copies streaming", "paused", time.Since(pausedAt).Round(time.Millisecond),
		"in_flight", m.Quiesce.InFlight)

	if cdx != nil {
		if m.CDX, err = cdx.finish(); err != nil {
			return nil, err
		}
	}
	if m.Redis, err = snaps.wait(); err != nil {
		return nil, err
	}
	version := redisVersion(ctx, o.Redis)
	for i := range m.Redis {
		m.Redis[i].RedisVersion = version
	}
	m.TookSeconds = time.Since(start).Seconds()
	if err := writeManifest(tmp, m); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, o.Out); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	ok = true
	return m, nil
}

// catchUp waits until the index groups have no lag.
func catchUp(ctx context.Context, o BackupOptions) error {
	if o.Kafka == nil {
		return nil
	}
	deadline := time.Now().Add(cmpOr(o.CatchUpTimeout, 5*time.Minute))
	for _, g := range o.Groups {
		if !g.Index {
			continue
		}
		for {
			lag, err := kafka.GroupLag(ctx, o.Kafka, g.Group, g.Topic)
			if err != nil {
				return fmt.Errorf("backup: index catch-up: %w", err)
			}
			if lag == 0 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("backup: the index group %s still lags %d records on %s; is the cdxwriter running?", g.Group, lag, g.Topic)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond): // polling the consumer's progress
			}
		}
	}
	return nil
}

// pause pauses every frontier that is not paused already and returns the
// function that resumes those (idempotent; it runs even when ctx is done).
func pause(ctx context.Context, fs []*frontier.Frontier, m *Manifest) (func(), error) {
	var paused []*frontier.Frontier
	resume := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		for _, f := range paused {
			_ = f.Resume(rctx)
		}
		paused = nil
	}
	for _, f := range fs {
		st, err := f.Stats(ctx)
		if err != nil {
			resume()
			return nil, fmt.Errorf("backup: %w", err)
		}
		if st.Paused {
			continue // an operator's pause: left as it is, and restored so
		}
		if err := f.Pause(ctx); err != nil {
			resume()
			return nil, fmt.Errorf("backup: %w", err)
		}
		paused = append(paused, f)
		m.Paused = append(m.Paused, f.Name())
	}
	return resume, nil
}

// drain waits until nothing is in flight and the groups have no lag, or
// the drain timeout passes, and records what it saw last.
func drain(ctx context.Context, o BackupOptions, m *Manifest, log *slog.Logger) error {
	start := time.Now()
	deadline := start.Add(cmpOr(o.DrainTimeout, 60*time.Second))
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var inflight, queued, lag int64
		for _, f := range o.Frontiers {
			st, err := f.Stats(ctx)
			if err != nil {
				return fmt.Errorf("backup: drain: %w", err)
			}
			inflight += st.InFlight
			queued += st.Queued
		}
		if o.Kafka != nil {
			for _, g := range o.Groups {
				n, err := kafka.GroupLag(ctx, o.Kafka, g.Group, g.Topic)
				if err != nil {
					return fmt.Errorf("backup: drain: %w", err)
				}
				lag += n
			}
		}
		m.Quiesce = Quiesce{InFlight: inflight, Queued: queued, ConsumerLag: lag, DrainSecs: time.Since(start).Seconds()}
		if inflight == 0 && lag == 0 {
			m.Quiesce.Drained = true
			return nil
		}
		if time.Now().After(deadline) {
			log.Warn("drain timed out; the URIs in flight will be crawled again after a restore",
				"in_flight", inflight, "consumer_lag", lag)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("backup: drain: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// redisVersion is the server's redis_version, or "" if INFO fails.
func redisVersion(ctx context.Context, rdb redis.UniversalClient) string {
	s, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return ""
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
