package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/internal/coalesce"
	"github.com/trawler-crawl/trawler/pkg/control"
	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/spool"
	"github.com/trawler-crawl/trawler/pkg/uri"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// Deps are the worker's collaborators.
type Deps struct {
	Profile    profile.Profile
	Kafka      kafka.Config
	Redis      redis.UniversalClient
	Resolver   fetch.Resolver // nil: DNS queries to the system's name servers
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	Version    string
}

// Worker runs ingest and the crawl loops.
type Worker struct {
	cfg    Config
	prof   profile.Profile
	log    *slog.Logger
	rdb    redis.UniversalClient
	kcfg   kafka.Config
	front  *frontier.Frontier
	batch  *frontier.Batcher
	chain  *chain
	recent *recentdb.DB
	// digests is the stream's digest index, for revisits across URLs.
	digests *digestIndex
	// lookups coalesces the threads' recently-crawled lookups (one per
	// fetch, one per page's outlinks) into shared pipelines.
	lookups *coalesce.Group[string, recentdb.Entry]
	// outlinkPuts coalesces the threads' writes of full captures' outlinks.
	outlinkPuts *coalesce.Group[outlinkList, struct{}]
	fetchParts
	warc     *warcwriter.Writer
	viral    *warcwriter.Writer
	clog     *crawllog.Writer
	failed   failMemo
	admitted *admitCache
	resolve  *uri.Resolver // extraction's link resolution, cached across pages
	producer *kgo.Client
	metrics  *metrics
	reg      prometheus.Registerer
	version  string

	slots *slots
	held  held
	wake  chan struct{}
	// idleMin and idleMax bound the dispatcher's backoff when the frontier
	// has nothing ready (tests stretch them to show what does not wait).
	idleMin, idleMax time.Duration
	// disk stops claims while free space is low (disk.go); writes while
	// writes fail (writeguard.go).
	disk   *diskGuard
	writes *writeGuard
	// refused remembers the hosts the address guard refused (refused.go);
	// archived counts the captures written in this run.
	refused  *refusals
	archived atomic.Int64
	// traps drops links that look like a crawler trap's (traps.go).
	traps *trapGuard

	started time.Time
	limitMu sync.Mutex
	limit   string
	// pausedSrc is the paused targets' cache of the claim path (control.go).
	pausedSrc *control.PausedSources

	// idLease holds the worker's identity (cfg.ID) while it runs; nil
	// when the caller owns the data directory (identity.go).
	idLease *lease
}

// New builds a worker; Run starts it.
func New(cfg Config, d Deps) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("worker config: %w", err)
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Registerer == nil {
		d.Registerer = prometheus.NewRegistry()
	}
	// The identity names the files, so it is settled (and leased) first.
	id, l, err := acquireIdentity(context.Background(), d.Redis, cfg, d.Logger)
	if err != nil {
		return nil, err
	}
	cfg.ID = id
	w, err := build(cfg, d)
	if err != nil {
		return nil, errors.Join(err, l.release())
	}
	w.idLease = l
	return w, nil
}

// build builds a worker whose identity is settled.
func build(cfg Config, d Deps) (*Worker, error) {
	for _, dir := range []string{cfg.WARCDir(), cfg.spoolDirOf(cfg.ID), cfg.logDirOf(cfg.ID)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("worker data dir: %w", err)
		}
	}
	// The identity, and so the directory, is ours now.
	spool.RemoveStaleLogged(cfg.spoolDirOf(cfg.ID), d.Logger, warcwriter.BufferFilePrefix)
	p := d.Profile
	if cfg.ClamdAddr != "" {
		p.ClamAV.Address = cfg.ClamdAddr
	}
	parts, err := newFetchParts(cfg, d, p)
	if err != nil {
		return nil, err
	}
	front, err := NewFrontier(d.Redis, cfg, p, d.Logger)
	if err != nil {
		return nil, err
	}
	// Another frontier.shards than the frontier's would orphan its
	// queues: stop here rather than at the first claim.
	if err := front.RecordLayout(context.Background()); err != nil {
		return nil, fmt.Errorf("worker frontier: %w", err)
	}
	logServerConfig(d.Redis, d.Logger)
	if err := d.Registerer.Register(frontier.NewCollector(front)); err != nil {
		return nil, fmt.Errorf("worker frontier metrics: %w", err)
	}
	ch, err := newChain(context.Background(), d.Redis, front.Prefix(), p, cfg.DataDir, parts.dns, d.Logger, d.Registerer)
	if err != nil {
		return nil, err
	}
	recent, err := recentdb.New(d.Redis, recentdb.Options{Crawl: cfg.Crawl, Stream: cfg.stream(), Logger: d.Logger})
	if err != nil {
		ch.close()
		return nil, fmt.Errorf("worker recently-crawled DB: %w", err)
	}
	digests, err := newDigestIndex(d.Redis, recent.History(), p, d.Logger)
	if err != nil {
		ch.close()
		return nil, fmt.Errorf("worker digest index: %w", err)
	}
	// A thread waits for its URI's journal and event to be acknowledged
	// (crawl.go publish): franz-go's default linger (10 ms) would be added
	// to every URI twice. Threads produce concurrently, so records still
	// batch while a request is in flight.
	prod, err := kafka.NewClient(d.Kafka, kgo.ProducerLinger(0))
	if err != nil {
		ch.close()
		return nil, fmt.Errorf("worker producer: %w", err)
	}
	m, err := newMetrics(d.Registerer, front.Name())
	if err != nil {
		ch.close()
		prod.Close()
		return nil, err
	}
	w := &Worker{
		cfg: cfg, prof: p, log: d.Logger, rdb: d.Redis, kcfg: d.Kafka, front: front, batch: frontier.NewBatcher(front),
		chain: ch, recent: recent, digests: digests, fetchParts: parts,
		lookups:  &coalesce.Group[string, recentdb.Entry]{Run: recent.Lookup, MaxBatch: maxLookupBatch},
		producer: prod, metrics: m, version: d.Version, reg: d.Registerer,
		admitted: newAdmitCache(admitCacheTTL, admitCacheMax), resolve: uri.NewResolver(0),
		slots: newSlots(2 * cfg.Threads), held: held{m: map[*frontier.Claim]struct{}{}}, wake: make(chan struct{}, 1),
		idleMin: 50 * time.Millisecond, idleMax: time.Second,
	}
	w.outlinkPuts = &coalesce.Group[outlinkList, struct{}]{Run: w.putOutlinks, MaxBatch: maxLookupBatch}
	w.disk = newDiskGuard(cfg.Disk, cfg.diskDirs(), m.disk, d.Logger)
	w.writes = newWriteGuard(cfg.diskDirs(), m.writes, d.Logger)
	w.refused = newRefusals()
	w.traps = newTrapGuard(w)
	return w, nil
}

// NewFrontier opens the frontier a worker with cfg and profile p uses; the
// frontier tools (rebuild, stats) open it the same way.
func NewFrontier(rdb redis.UniversalClient, cfg Config, p profile.Profile, log *slog.Logger) (*frontier.Frontier, error) {
	o := frontier.OptionsFrom(p)
	o.Logger = log
	f, err := frontier.New(rdb, cfg.Name(), o)
	if err != nil {
		return nil, fmt.Errorf("worker frontier: %w", err)
	}
	return f, nil
}

// Archived counts the captures (responses and revisits, of any status;
// not dns: records) this worker has written to WARC since it was built:
// the standalone tells a run that archived nothing by it.
func (w *Worker) Archived() int64 { return w.archived.Load() }

// Frontier exposes the worker's frontier, for idle detection.
func (w *Worker) Frontier() *frontier.Frontier { return w.front }

// Run consumes launches and crawls until ctx is cancelled, then shuts down
// in order: stop taking work, finish in-flight fetches, close WARCs, flush
// and commit, and release the identity. A lost identity lease stops it
// the same way, with ErrIdentityLost.
func (w *Worker) Run(ctx context.Context) (err error) {
	defer func() {
		if rerr := w.idLease.release(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("worker identity: %w", rerr))
		}
	}()
	ctx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	go func() {
		select {
		case <-w.idLease.Lost():
			cancelRun(fmt.Errorf("%w: %s", ErrIdentityLost, w.cfg.ID))
		case <-ctx.Done():
		}
	}()
	// maxTimeSeconds counts from the crawl's start, which the first
	// worker records in Redis; a worker started later shares it.
	started, err := w.front.CrawlStart(ctx)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	w.started = started
	// A terminate command (control.go) ends the run as a cancelled ctx does.
	ctl, err := w.startControl(func() { cancelRun(errTerminated) })
	if err != nil {
		return err
	}
	if err := w.holdIfTerminated(ctx); err != nil {
		return err
	}
	if err := w.openOutputs(); err != nil {
		return err
	}
	w.disk.check() // before the dispatcher's first claim (disk.go)
	ingest, err := kafka.NewConsumer(w.kcfg, kafka.ConsumerOptions[messages.Launch]{
		Group:      w.group(),
		Topics:     []string{w.cfg.ToCrawlTopic()},
		DLQTopic:   w.cfg.DLQTopic(),
		Decode:     func(r *kgo.Record) (messages.Launch, error) { return messages.DecodeLaunch(r.Value) },
		Handle:     w.ingest,
		Logger:     w.log.With("component", "ingest"),
		Registerer: prometheus.WrapRegistererWith(prometheus.Labels{"consumer": "ingest"}, w.reg),
	})
	if err != nil {
		return fmt.Errorf("worker ingest consumer: %w", err)
	}

	// Threads get their own context so that, on shutdown, they finish what
	// they hold after the dispatcher stops claiming.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	work := make(chan *frontier.Claim, 2*w.cfg.Threads)
	var threads, loops sync.WaitGroup
	for i := 0; i < w.cfg.Threads; i++ {
		threads.Add(1)
		go func() { defer threads.Done(); w.thread(ctx, workCtx, work, i) }()
	}
	threads.Add(1)
	go func() { defer threads.Done(); w.dispatch(ctx, work) }()
	loops.Add(2)
	go func() { defer loops.Done(); w.reapLoop(ctx) }()
	go func() { defer loops.Done(); w.renewLoop(workCtx) }()
	loops.Add(1)
	go func() { defer loops.Done(); w.disk.run(ctx) }()

	loops.Add(2)
	go func() { defer loops.Done(); _ = w.chain.engine.Run(workCtx) }()
	go func() { defer loops.Done(); ctl.run(ctx) }()
	if w.cfg.leased() && w.cfg.JanitorPeriod > 0 {
		loops.Add(1)
		go func() { defer loops.Done(); w.janitorLoop(ctx) }()
	}
	ingestErr := ingest.Run(ctx)
	threads.Wait()
	w.fetchParts.close()
	stopWork()
	loops.Wait()

	var errs []error
	if ingestErr != nil && !errors.Is(ingestErr, context.Canceled) {
		errs = append(errs, fmt.Errorf("ingest: %w", ingestErr))
	}
	if err := w.chain.close(); err != nil {
		errs = append(errs, fmt.Errorf("close scope: %w", err))
	}
	errs = append(errs, w.closeOutputs())
	flushCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.producer.Flush(flushCtx); err != nil {
		errs = append(errs, fmt.Errorf("flush producer: %w", err))
	}
	w.producer.Close()
	if cause := context.Cause(ctx); errors.Is(cause, ErrIdentityLost) {
		errs = append(errs, cause)
	}
	return errors.Join(errs...)
}

// openOutputs closes the WARCs a crashed run left ".open" (normal and
// viral), then opens the WARC writers and crawl.log, and writes the lines
// the crash kept from crawl.log (recoverCrawlLog). With leased identities
// it recovers only its own identity's files: the others in the directory
// may be a live sibling's (the janitor takes a dead one's).
func (w *Worker) openOutputs() error {
	host, _ := os.Hostname()
	var recoveredAll []warcwriter.ClosedFile
	open := func(dir, prefix, kind string) (*warcwriter.Writer, error) {
		recoverOpen := func() ([]warcwriter.ClosedFile, error) { return warcwriter.RecoverOpen(dir, w.log) }
		if w.cfg.leased() {
			recoverOpen = func() ([]warcwriter.ClosedFile, error) { return warcwriter.RecoverOpenHost(dir, w.cfg.ID, w.log) }
		}
		recovered, err := recoverOpen()
		if err != nil {
			return nil, fmt.Errorf("recover open WARCs in %s: %w", dir, err)
		}
		recoveredAll = append(recoveredAll, recovered...)
		for _, f := range recovered {
			w.log.Warn("closed WARC left open by a previous run", "file", f.Name, "records", f.Records)
			w.warcClosed(f)
		}
		ww, err := warcwriter.New(warcwriter.Config{
			Dir: dir, Prefix: prefix, MaxFileSize: w.prof.WARC.MaxFileSizeBytes,
			CompressionLevel: w.prof.WARC.CompressionLevel, Hostname: w.cfg.ID, CrawlName: w.prof.Crawl.Name,
			Operator: w.prof.Crawl.Operator, RobotsPolicy: w.prof.Robots.Policy, UserAgent: w.ua,
			Software: "trawler/" + w.version + " (" + host + ")", Parallel: 1 + w.cfg.Threads/16,
			Version: w.prof.WARC.Version,
		}, warcwriter.WithOnClose(w.warcClosed), warcwriter.WithLogger(w.log.With("warcs", kind)),
			warcwriter.WithRegisterer(prometheus.WrapRegistererWith(prometheus.Labels{"kind": kind}, w.reg)),
			warcwriter.WithBufferDir(w.cfg.spoolDirOf(w.cfg.ID)))
		if err != nil {
			return nil, fmt.Errorf("worker %s warc writer: %w", kind, err)
		}
		return ww, nil
	}
	var err error
	if w.warc, err = open(w.cfg.WARCDir(), w.prof.WARC.Prefix, "normal"); err != nil {
		return err
	}
	if w.viral, err = open(w.cfg.ViralDir(), w.prof.WARC.Prefix+"-VIRAL", "viral"); err != nil {
		return errors.Join(err, w.warc.Close())
	}
	// Rotated logs are announced like closed WARCs (crawllog_announce.go).
	if w.clog, err = crawllog.Open(crawllog.Options{Dir: w.cfg.logDirOf(w.cfg.ID), Logger: w.log, OnRotate: w.crawlLogRotated}); err != nil {
		return errors.Join(fmt.Errorf("worker crawl.log: %w", err), w.warc.Close(), w.viral.Close())
	}
	w.recoverCrawlLog(recoveredAll)
	return nil
}

// closeOutputs closes the WARC writers and crawl.log.
func (w *Worker) closeOutputs() error {
	var errs []error
	if err := w.warc.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close warcs: %w", err))
	}
	if err := w.viral.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close viral warcs: %w", err))
	}
	if err := w.clog.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close crawl.log: %w", err))
	}
	return errors.Join(errs...)
}

func (w *Worker) warcClosed(f warcwriter.ClosedFile) { w.announceWARC(f, w.cfg.ID) }

// announceWARC publishes the closed-file notice of f, written by identity
// host (the janitor announces other identities' files).
func (w *Worker) announceWARC(f warcwriter.ClosedFile, host string) {
	n := messages.WarcNotice{
		Filename: f.Name, Path: f.Path, Size: f.Size, Records: f.Records, CrawlName: w.prof.Crawl.Name,
		Host: host, Opened: messages.FormatTimestamp(f.Opened), Closed: messages.FormatTimestamp(f.Closed),
	}
	b, err := jsonMarshal(n)
	if err != nil {
		w.log.Error("encode warc notice", "file", f.Name, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.producer.ProduceSync(ctx, &kgo.Record{Topic: w.cfg.Crawl + ".warcs", Key: []byte(f.Name), Value: b}).FirstErr(); err != nil {
		w.log.Error("publish warc notice", "file", f.Name, "err", err)
	}
}

// group is the ingest consumer group; all workers of a stream share it.
func (w *Worker) group() string { return "trawler-worker-" + w.cfg.Name() }
