package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/rdbsync"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/pkg/statebackup"
	"github.com/trawler-crawl/trawler/pkg/streamname"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
	"github.com/trawler-crawl/trawler/services/cdxwriter"
	"github.com/trawler-crawl/trawler/services/standalone"
)

const stateUsage = `usage: trawler state backup --out DIR [--standalone DATA | --redis ADDR --kafka BROKERS --cdx URL] [--crawl fc|dc] [--streams npld,bypm]
       trawler state restore --from DIR (--data DIR | --redis ADDR[,ADDR...] [--index DIR])
       trawler state rebuild-recent (--index DIR | --warcs PATH,...) [--redis ADDR] [--crawl fc|dc] [--stream npld|bypm]
backup copies Redis (frontier, recently-crawled DB, launcher ledger) over the
replication protocol and the CDX index as a Pebble checkpoint, while the crawl
runs; restore makes a fresh standalone data directory from a backup, or
loads it into a running, empty Redis or Redis Cluster (any layout) and puts
the index in the cdxwriter's directory;
rebuild-recent refills the recently-crawled DB from a CDX index or WARC files.
See docs/state.md.`

func runState(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	verb, rest, err := sub(args, verbs()["state"]...)
	if err != nil {
		fmt.Fprintln(stderr, stateUsage)
		return err
	}
	fs := newFlagSet("state "+verb, stderr)
	var c common
	c.registerBase(fs, "info")
	switch verb {
	case "backup":
		var o backupFlags
		o.register(fs)
		if err := parse(fs, rest); err != nil {
			return err
		}
		return o.run(ctx, c, stdout, stderr)
	case "restore":
		return runRestore(ctx, c, fs, rest, stdout, stderr)
	default:
		var o rebuildFlags
		o.register(fs)
		if err := parse(fs, rest); err != nil {
			return err
		}
		return o.run(ctx, c, stdout, stderr)
	}
}

// backupFlags are state backup's flags.
type backupFlags struct {
	rc        redisconn.Config
	redisUser string
	diskless  bool
	kc        kafka.Config
	crawl     string
	streams   string
	cdx       string
	tokenFile string
	out       string
	drain     time.Duration
	// standalone, when set, is a running standalone's data directory,
	// whose standalone.json gives Redis, Kafka and the CDX API.
	standalone string
}

func (o *backupFlags) register(fs *flag.FlagSet) {
	o.rc.RegisterFlags(fs)
	o.kc.RegisterFlags(fs)
	fs.StringVar(&o.redisUser, "redis-user", "", "Redis ACL user for the snapshot (needs PSYNC and REPLCONF); empty: the default user")
	fs.BoolVar(&o.diskless, "diskless", false, "ask for a diskless snapshot (the master streams it without writing dump.rdb, if repl-diskless-sync is on)")
	fs.StringVar(&o.crawl, "crawl", "fc", "crawl: fc (frequent) or dc (domain)")
	fs.StringVar(&o.streams, "streams", "npld,bypm", "streams whose frontiers are paused for the snapshots (fc; ignored for dc)")
	fs.StringVar(&o.cdx, "cdx", "http://127.0.0.1:8081", "base URL of the CDX index API (cdxwriter or standalone --cdx-addr); empty: no index in the backup")
	fs.StringVar(&o.tokenFile, "admin-token-file", "", "file holding the admin token the CDX API's checkpoint (a POST) needs; with --standalone, default: the standalone's")
	fs.StringVar(&o.out, "out", "", "backup directory to create (required; must not exist)")
	fs.StringVar(&o.standalone, "standalone", "", "data directory of a running `trawler standalone`: its standalone.json gives --redis, --kafka, --cdx and --admin-token-file")
	fs.DurationVar(&o.drain, "drain-timeout", time.Minute, "longest wait for in-flight URIs and consumer lag before the snapshots are taken anyway")
}

func (o *backupFlags) run(ctx context.Context, c common, stdout, stderr io.Writer) error {
	if o.out == "" {
		return usageError(stderr, "state backup needs --out")
	}
	if o.standalone != "" {
		e, err := standalone.ReadEndpoints(o.standalone)
		if err != nil {
			return err
		}
		o.rc.Addr, o.rc.Cluster, o.kc.Brokers, o.cdx = e.Redis, false, e.Kafka, ""
		if e.CDX != "" {
			o.cdx = "http://" + e.CDX
		}
		if o.tokenFile == "" {
			o.tokenFile = standaloneTokenFile(o.standalone, e)
		}
	}
	if err := errorsJoin(o.rc.Validate(), o.kc.Validate()); err != nil {
		return err
	}
	log, err := newLogger(c.logFormat, c.logLevel, stderr)
	if err != nil {
		return err
	}
	token, err := admin.LoadToken(o.tokenFile)
	if err != nil {
		return err
	}
	rdb, err := redisconn.OpenUniversal(ctx, o.rc)
	if err != nil {
		return err
	}
	defer rdb.Close()
	masters, err := statebackup.Masters(ctx, rdb)
	if err != nil {
		return err
	}
	bo := statebackup.BackupOptions{Out: o.out, Redis: rdb, DrainTimeout: o.drain, CDXURL: o.cdx, CDXToken: token,
		Version: buildVersion(), Logger: log}
	for _, a := range masters {
		bo.Masters = append(bo.Masters, rdbsync.Options{Addr: a, Username: o.redisUser, Password: o.rc.Password, Diskless: o.diskless})
	}
	streams := strings.Split(o.streams, ",")
	if o.crawl == "dc" {
		streams = []string{""}
	}
	for _, s := range streams {
		name := streamname.Name(o.crawl, strings.TrimSpace(s))
		shards, err := frontier.RecordedShards(ctx, rdb, name)
		if err != nil {
			return err
		}
		f, err := frontier.New(rdb, name, frontier.Options{Shards: shards})
		if err != nil {
			return err
		}
		bo.Frontiers = append(bo.Frontiers, f)
		bo.Groups = append(bo.Groups, statebackup.GroupTopic{Group: "trawler-worker-" + name, Topic: topicOf(o.crawl, s, "tocrawl")})
	}
	ccfg := cdxwriter.Config{Crawl: o.crawl}
	bo.Groups = append(bo.Groups, statebackup.GroupTopic{Group: ccfg.Group(), Topic: ccfg.Topic(), Index: true})
	kc, err := kafka.NewClient(o.kc)
	if err != nil {
		return err
	}
	defer kc.Close()
	bo.Kafka = kadm.NewClient(kc)
	m, err := statebackup.Backup(ctx, bo)
	if err != nil {
		return err
	}
	var size int64
	for _, f := range m.Files {
		size += f.Size
	}
	fmt.Fprintf(stdout, "Backup %s: %d files, %d bytes, in %.1fs (claims paused %.2fs)\n", o.out, len(m.Files), size, m.TookSeconds, m.Quiesce.PausedSecs)
	fmt.Fprintf(stdout, "  drained: %v; in flight at the snapshot: %d (crawled again after a restore); queued: %d\n",
		m.Quiesce.Drained, m.Quiesce.InFlight, m.Quiesce.Queued)
	return nil
}

// topicOf names a stream's topic (fc.tocrawl.npld, dc.tocrawl).
func topicOf(crawl, stream, kind string) string {
	if crawl == "dc" || stream == "" {
		return crawl + "." + kind
	}
	return crawl + "." + kind + "." + strings.TrimSpace(stream)
}

// rebuildFlags are state rebuild-recent's flags.
type rebuildFlags struct {
	rc         redisconn.Config
	crawl      string
	stream     string
	collection string
	index      string
	warcs      string
	ttl        time.Duration
}

func (o *rebuildFlags) register(fs *flag.FlagSet) {
	o.rc.RegisterFlags(fs)
	fs.StringVar(&o.crawl, "crawl", "fc", "crawl: fc (frequent) or dc (domain)")
	fs.StringVar(&o.stream, "stream", "npld", "the stream whose history is rebuilt (fc; ignored for dc)")
	fs.StringVar(&o.collection, "collection", "", "index collection (default: the crawl name)")
	fs.StringVar(&o.index, "index", "", "a CDX index directory (Pebble, not open elsewhere: a stopped cdxwriter's cdx/index or a restored backup's)")
	fs.StringVar(&o.warcs, "warcs", "", "comma-separated WARC files or directories (every *.warc.gz under them), instead of --index")
	fs.DurationVar(&o.ttl, "ttl", cdxwriter.DefaultRecentTTL, "entry lifetime after its newest capture, as the cdxwriter's --recent-ttl")
}

func (o *rebuildFlags) run(ctx context.Context, c common, stdout, stderr io.Writer) error {
	if (o.index == "") == (o.warcs == "") {
		return usageError(stderr, "state rebuild-recent needs exactly one of --index and --warcs")
	}
	if err := o.rc.Validate(); err != nil {
		return err
	}
	log, err := newLogger(c.logFormat, c.logLevel, stderr)
	if err != nil {
		return err
	}
	rdb, err := redisconn.OpenUniversal(ctx, o.rc)
	if err != nil {
		return err
	}
	defer rdb.Close()
	stream := o.stream
	if o.crawl == "dc" {
		stream = ""
	}
	db, err := recentdb.New(rdb, recentdb.Options{Crawl: o.crawl, Stream: stream, TTL: o.ttl, Logger: log})
	if err != nil {
		return err
	}
	start := time.Now()
	var rep statebackup.RebuildReport
	if o.index != "" {
		ix, err := cdxindex.Open(o.index, cdxindex.Options{Logger: log})
		if err != nil {
			return err
		}
		defer ix.Close()
		coll := o.collection
		if coll == "" {
			coll = o.crawl
		}
		rep, err = statebackup.RebuildFromIndex(ctx, ix, coll, db)
		if err != nil {
			return err
		}
	} else {
		paths, err := warcPaths(o.warcs)
		if err != nil {
			return err
		}
		rep, err = statebackup.RebuildFromWARCs(ctx, paths, db, func(e *warcindex.RecordError) {
			log.Warn("unreadable WARC record skipped", "err", e)
		})
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "Rebuilt recently-crawled DB %s in %s: %d lines read, %d updates written, %d bad records\n",
		db.History(), time.Since(start).Round(time.Millisecond), rep.Lines, rep.Updates, rep.BadRecords)
	for _, k := range sortedKeys(rep.Skipped) {
		fmt.Fprintf(stdout, "  skipped (%s): %d\n", k, rep.Skipped[k])
	}
	return nil
}

// warcPaths expands files and directories into WARC files.
func warcPaths(list string) ([]string, error) {
	var out []string
	for p := range strings.SplitSeq(list, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".warc.gz") || strings.HasSuffix(path, ".warc")) {
				out = append(out, path)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no WARC files in " + list)
	}
	sort.Strings(out)
	return out, nil
}

// usageError says what is missing, with the usage, and returns errUsage
// (exit status 2).
func usageError(stderr io.Writer, msg string) error {
	fmt.Fprintf(stderr, "trawler %s\n%s\n", msg, stateUsage)
	return fmt.Errorf("%w: %s", errUsage, msg)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// runRestore restores a backup into a new standalone data directory
// (--data) or into a running Redis (--redis, with the index to --index).
func runRestore(ctx context.Context, c common, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var rc redisconn.Config
	rc.RegisterFlags(fs)
	from := fs.String("from", "", "the backup directory (required)")
	data := fs.String("data", "", "the standalone data directory to create; must not exist or be empty")
	index := fs.String("index", "", "with --redis: the cdxwriter's index directory (<data>/cdx/index) to restore the index into; must not exist or be empty; empty: not restored")
	bin := fs.String("redis-server", "", "redis-server binary that reads the snapshots (default: from PATH)")
	if err := parse(fs, args); err != nil {
		return err
	}
	toRedis := false
	fs.Visit(func(f *flag.Flag) { toRedis = toRedis || f.Name == "redis" || f.Name == "redis-cluster" })
	switch {
	case *from == "":
		return usageError(stderr, "state restore needs --from")
	case (*data == "") == !toRedis:
		return usageError(stderr, "state restore needs one of --data (a standalone data directory) and --redis (a running Redis)")
	case *index != "" && !toRedis:
		return usageError(stderr, "state restore: --index goes with --redis (with --data the index goes into the data directory)")
	}
	log, err := newLogger(c.logFormat, c.logLevel, stderr)
	if err != nil {
		return err
	}
	var rep *statebackup.RestoreReport
	into := *data
	if toRedis {
		if err := rc.Validate(); err != nil {
			return err
		}
		rdb, err := redisconn.OpenUniversal(ctx, rc, redisconn.WithLogger(log))
		if err != nil {
			return err
		}
		defer rdb.Close()
		into = rc.Addr
		rep, err = statebackup.RestoreTo(ctx, statebackup.RestoreToOptions{From: *from, Redis: rdb, IndexDir: *index,
			RedisServer: *bin, Logger: log})
		if err != nil {
			return err
		}
	} else if rep, err = statebackup.Restore(ctx, statebackup.RestoreOptions{From: *from, DataDir: *data,
		RedisServer: *bin, Logger: log}); err != nil {
		return err
	}
	m := rep.Manifest
	fmt.Fprintf(stdout, "Restored %s (taken %s) into %s in %s\n", *from, m.Created.Format(time.RFC3339), into, rep.Took.Round(time.Millisecond))
	fmt.Fprintf(stdout, "  redis keys:          %d\n  URIs in flight:      %d (queued again: crawled again)\n", rep.Keys, rep.Released)
	for _, k := range sortedKeys(rep.CDXCounts) {
		fmt.Fprintf(stdout, "  cdx entries (%s):    %d\n", k, rep.CDXCounts[k])
	}
	if toRedis {
		fmt.Fprintln(stdout, "Start the workers and the cdxwriter on this Redis (the cdxwriter on the restored index); Kafka as docs/state.md says.")
		return nil
	}
	fmt.Fprintln(stdout, "Start the crawl with `trawler standalone --data "+*data+"` (new ports as you like); Kafka starts empty.")
	return nil
}
