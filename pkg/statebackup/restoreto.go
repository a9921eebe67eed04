package statebackup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	targetVersion, err := oldestVersion(ctx, o.Redis)
	if err != nil {
		return nil, fmt.Errorf("restore: the target's version: %w", err)
	}
	expiredBefore, err := expiredKeys(ctx, o.Redis)
	if err != nil {
		return nil, fmt.Errorf("restore: the target's expired keys: %w", err)
	}
	rep := &RestoreReport{Manifest: m}
	for _, s := range m.Redis {
		log.Info("copying a Redis snapshot into the target", "file", s.File, "master", s.Addr)
		n, err := copySnapshot(ctx, o, filepath.Join(o.From, filepath.FromSlash(s.File)), targetVersion)
		if err != nil {
			return nil, fmt.Errorf("restore %s: %w", s.File, err)
		}
		rep.Keys += n
	}
	// Every key copied is in the target, but for those whose time to live
	// has run out there since.
	n, err := keyCount(ctx, o.Redis)
	if err == nil {
		var after int64
		after, err = expiredKeys(ctx, o.Redis)
		if err == nil && (n > rep.Keys || n+after-expiredBefore < rep.Keys) {
			err = fmt.Errorf("the target holds %d keys (%d expired meanwhile) after copying the snapshots' %d", n, after-expiredBefore, rep.Keys)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
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
func copySnapshot(ctx context.Context, o RestoreToOptions, rdbPath string, targetVersion version) (int64, error) {
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
	// DUMP's payload is in the format of the server that made it, which an
	// older server's RESTORE refuses.
	if v, err := oldestVersion(ctx, srv.rdb); err != nil {
		return 0, err
	} else if targetVersion.older(v) {
		return 0, fmt.Errorf("the local redis-server is %s, newer than the target's %s, whose RESTORE would refuse its DUMP payloads: use a redis-server as old as the target's (--redis-server)", v, targetVersion)
	}
	src, err := snapshotDB(ctx, srv.rdb)
	if err != nil {
		return 0, err
	}
	if src != srv.rdb {
		defer func() { _ = src.Close() }()
	}
	expiredBefore, err := expiredKeys(ctx, src)
	if err != nil {
		return 0, err
	}
	want, err := src.DBSize(ctx).Result()
	if err != nil {
		return 0, err
	}
	var copied int64
	page := make([]string, 0, copyPage)
	flush := func() error {
		n, err := copyKeys(ctx, src, o.Redis, page)
		copied += n
		page = page[:0]
		return err
	}
	iter := src.Scan(ctx, 0, "", copyPage).Iterator()
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
	// SCAN returns every key that is there all along: what it missed had
	// a time to live that ran out meanwhile.
	expiredAfter, err := expiredKeys(ctx, src)
	if err != nil {
		return copied, err
	}
	if copied > want || copied+expiredAfter-expiredBefore < want {
		return copied, fmt.Errorf("copied %d keys (%d expired meanwhile) of the snapshot's %d", copied, expiredAfter-expiredBefore, want)
	}
	return copied, nil
}

// copyKeys moves keys from src to dst with their time to live and
// returns how many it copied; keys whose time to live ran out since the
// scan are left out.
func copyKeys(ctx context.Context, src *redis.Client, dst redis.UniversalClient, keys []string) (int64, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	pipe := src.Pipeline()
	dumps := make([]*redis.StringCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	for i, k := range keys {
		dumps[i], ttls[i] = pipe.Dump(ctx, k), pipe.PTTL(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("dump %d keys: %w", len(keys), err)
	}
	out := dst.Pipeline()
	var copied int64
	for i, k := range keys {
		ttl := ttls[i].Val()
		if errors.Is(dumps[i].Err(), redis.Nil) || ttl == -2 { // PTTL's "no such key"
			continue
		}
		if ttl < 0 {
			ttl = 0 // -1: no expiry
		}
		out.Restore(ctx, k, ttl, dumps[i].Val())
		copied++
	}
	if copied == 0 {
		return 0, nil
	}
	if _, err := out.Exec(ctx); err != nil {
		return 0, fmt.Errorf("restore %d keys: %w", copied, err)
	}
	return copied, nil
}

// snapshotDB is a client of the database that holds the snapshot's keys:
// trawler keeps a crawl in one (--redis-db), which the restore copies
// into the target client's database. A snapshot with keys in several is
// refused: which would go where?
func snapshotDB(ctx context.Context, rdb *redis.Client) (*redis.Client, error) {
	info, err := rdb.Info(ctx, "keyspace").Result()
	if err != nil {
		return nil, fmt.Errorf("the snapshot's databases: %w", err)
	}
	var dbs []int
	for name := range infoFields(info) {
		if n, ok := strings.CutPrefix(name, "db"); ok {
			if i, err := strconv.Atoi(n); err == nil {
				dbs = append(dbs, i)
			}
		}
	}
	switch {
	case len(dbs) > 1:
		slices.Sort(dbs)
		return nil, fmt.Errorf("the snapshot holds keys in databases %v; a restore copies one", dbs)
	case len(dbs) == 0 || dbs[0] == 0:
		return rdb, nil
	}
	o := *rdb.Options()
	o.DB = dbs[0]
	return redis.NewClient(&o), nil
}

// expiredKeys is INFO's count of keys expired, over every master.
func expiredKeys(ctx context.Context, rdb redis.UniversalClient) (int64, error) {
	var total atomic.Int64
	err := eachMaster(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "stats").Result()
		if err != nil {
			return err
		}
		n, err := strconv.ParseInt(infoFields(info)["expired_keys"], 10, 64)
		total.Add(n)
		return err
	})
	return total.Load(), err
}

// version is a Redis version's major and minor number: what decides
// the format of DUMP payloads.
type version struct{ major, minor int }

func (v version) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }
func (v version) older(w version) bool {
	return v.major < w.major || v.major == w.major && v.minor < w.minor
}

// oldestVersion is the oldest redis_version of rdb's masters.
func oldestVersion(ctx context.Context, rdb redis.UniversalClient) (version, error) {
	var mu sync.Mutex
	oldest := version{1 << 30, 0}
	err := eachMaster(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "server").Result()
		if err != nil {
			return err
		}
		raw := infoFields(info)["redis_version"]
		var v version
		if _, err := fmt.Sscanf(raw, "%d.%d", &v.major, &v.minor); err != nil {
			return fmt.Errorf("redis_version %q: %w", raw, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if v.older(oldest) {
			oldest = v
		}
		return nil
	})
	return oldest, err
}

// eachMaster runs fn on every master of a cluster (at once), or on the
// one server.
func eachMaster(ctx context.Context, rdb redis.UniversalClient, fn func(context.Context, *redis.Client) error) error {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, fn)
	case *redis.Client:
		return fn(ctx, c)
	}
	return fmt.Errorf("unsupported Redis client %T", rdb)
}

// keyCount is how many keys rdb holds: over every master of a cluster.
func keyCount(ctx context.Context, rdb redis.UniversalClient) (int64, error) {
	var total atomic.Int64
	err := eachMaster(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		n, err := c.DBSize(ctx).Result()
		total.Add(n)
		return err
	})
	return total.Load(), err
}
