package statebackup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RestoreToOptions configures RestoreTo.
type RestoreToOptions struct {
	// From is the backup directory.
	From string
	// Redis is the running Redis to load the backup into: one server or
	// a Redis Cluster, of any number of masters and any slot layout. It
	// must hold no keys.
	Redis redis.UniversalClient
	// IndexDir is where the CDX checkpoint goes: the cdxwriter's
	// <data>/cdx/index, which must not exist or be empty. Empty: the
	// index is not restored (the backup's cdx/ can be copied by hand).
	IndexDir string
	// RedisServer is the redis-server binary that reads each snapshot;
	// empty: redis-server from PATH.
	RedisServer string
	Logger      *slog.Logger
}

// copyPage is how many keys one round trip moves: DUMP and PTTL from the
// snapshot's server, RESTORE into the target.
const copyPage = 500

// RestoreTo loads a backup into a running Redis, the way a cluster's
// state is restored: each master's snapshot (one for a single server) is
// read by a private redis-server and every key is copied with DUMP and
// RESTORE, so a Redis Cluster target routes each key to the master that
// owns its slot now, whatever the backed-up cluster's layout was. Then,
// as Restore does, the backup's own pause is undone and the URIs leased
// at the snapshot go back to their queues; and the checkpoint becomes the
// cdxwriter's index in IndexDir. Everything is verified first (manifest,
// checksums, each RDB's structure), and a target that holds any key is
// refused, so a restore never mixes two states. A restore that fails
// half way leaves keys behind: empty the target (FLUSHALL on every
// master) before trying again.
func RestoreTo(ctx context.Context, o RestoreToOptions) (*RestoreReport, error) {
	start := time.Now()
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Redis == nil {
		return nil, errors.New("restore: no target Redis given")
	}
	m, err := ReadManifest(o.From)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	if err := Verify(o.From, m); err != nil {
		return nil, fmt.Errorf("restore from %s: %w", o.From, err)
	}
	for _, s := range m.Redis {
		if err := checkRDB(filepath.Join(o.From, filepath.FromSlash(s.File))); err != nil {
			return nil, err
		}
	}
	if n, err := keyCount(ctx, o.Redis); err != nil {
		return nil, fmt.Errorf("restore: count the target's keys: %w", err)
	} else if n > 0 {
		return nil, fmt.Errorf("restore: %w: the target Redis holds %d keys; restore into an empty one", ErrNotEmpty, n)
	}
	if o.IndexDir != "" && m.CDX != nil {
		if err := checkEmpty(o.IndexDir); err != nil {
			return nil, err
		}
	}
	rep := &RestoreReport{Manifest: m}
	for _, s := range m.Redis {
		log.Info("copying a Redis snapshot into the target", "file", s.File, "master", s.Addr)
		n, err := copySnapshot(ctx, o, filepath.Join(o.From, filepath.FromSlash(s.File)))
		if err != nil {
			return nil, fmt.Errorf("restore %s: %w", s.File, err)
		}
		rep.Keys += n
	}
	if n, err := keyCount(ctx, o.Redis); err != nil {
		return nil, fmt.Errorf("restore: count the target's keys: %w", err)
	} else if n != rep.Keys {
		return nil, fmt.Errorf("restore: the target holds %d keys after copying the snapshots' %d", n, rep.Keys)
	}
	if rep.Released, err = settleFrontiers(ctx, o.Redis, m); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	if o.IndexDir != "" && m.CDX != nil {
		if rep.CDXCounts, err = restoreIndexTo(o.From, o.IndexDir, m); err != nil {
			return nil, err
		}
	}
	rep.Took = time.Since(start)
	return rep, nil
}

// copySnapshot copies every key of one RDB into the target and returns
// how many it copied.
func copySnapshot(ctx context.Context, o RestoreToOptions, rdbPath string) (int64, error) {
	dir, err := os.MkdirTemp("", "trawler-restore-")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if err := copyFile(rdbPath, filepath.Join(dir, "dump.rdb")); err != nil {
		return 0, err
	}
	srv, err := startPrivate(ctx, o.RedisServer, dir)
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	want, err := srv.rdb.DBSize(ctx).Result()
	if err != nil {
		return 0, err
	}
	var copied, expired int64
	page := make([]string, 0, copyPage)
	flush := func() error {
		n, gone, err := copyKeys(ctx, srv.rdb, o.Redis, page)
		copied, expired = copied+n, expired+gone
		page = page[:0]
		return err
	}
	iter := srv.rdb.Scan(ctx, 0, "", copyPage).Iterator()
	for iter.Next(ctx) {
		if page = append(page, iter.Val()); len(page) == copyPage {
			if err := flush(); err != nil {
				return copied, err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return copied, fmt.Errorf("scan the snapshot: %w", err)
	}
	if err := flush(); err != nil {
		return copied, err
	}
	if copied+expired != want {
		return copied, fmt.Errorf("copied %d keys (and %d expired meanwhile) of the snapshot's %d", copied, expired, want)
	}
	return copied, nil
}

// copyKeys moves keys from src to dst with their time to live; it
// returns how many it copied and how many expired before they could be.
func copyKeys(ctx context.Context, src *redis.Client, dst redis.UniversalClient, keys []string) (copied, expired int64, err error) {
	if len(keys) == 0 {
		return 0, 0, nil
	}
	pipe := src.Pipeline()
	dumps := make([]*redis.StringCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	for i, k := range keys {
		dumps[i], ttls[i] = pipe.Dump(ctx, k), pipe.PTTL(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, fmt.Errorf("dump %d keys: %w", len(keys), err)
	}
	out := dst.Pipeline()
	for i, k := range keys {
		ttl := ttls[i].Val()
		if errors.Is(dumps[i].Err(), redis.Nil) || ttl == -2 { // PTTL's "no such key"
			expired++ // a key with a time to live, gone since the scan
			continue
		}
		if ttl < 0 {
			ttl = 0 // -1: no expiry
		}
		out.Restore(ctx, k, ttl, dumps[i].Val())
		copied++
	}
	if copied == 0 {
		return 0, expired, nil
	}
	if _, err := out.Exec(ctx); err != nil {
		return 0, expired, fmt.Errorf("restore %d keys: %w", copied, err)
	}
	return copied, expired, nil
}

// keyCount is how many keys rdb holds: over every master of a cluster.
func keyCount(ctx context.Context, rdb redis.UniversalClient) (int64, error) {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return rdb.DBSize(ctx).Result()
	}
	var total atomic.Int64 // ForEachMaster runs on every master at once
	err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		n, err := c.DBSize(ctx).Result()
		total.Add(n)
		return err
	})
	return total.Load(), err
}
