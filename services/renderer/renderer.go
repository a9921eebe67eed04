package renderer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/browser"
	"github.com/trawler-crawl/trawler/pkg/clamav"
	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/identity"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/mitm"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/qa"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/replay"
	"github.com/trawler-crawl/trawler/pkg/robots"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/sheets"
	"github.com/trawler-crawl/trawler/pkg/spool"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// Deps are the renderer's collaborators.
type Deps struct {
	Profile    profile.Profile
	Kafka      kafka.Config
	Redis      redis.UniversalClient
	Resolver   fetch.Resolver // nil: the system's name servers
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	Version    string
}

// Renderer renders handed-off pages and records what the browser loads.
type Renderer struct {
	cfg      Config
	prof     profile.Profile
	log      *slog.Logger
	kcfg     kafka.Config
	reg      prometheus.Registerer
	version  string
	ua       string
	prefix   string
	sheets   *sheets.Sheets
	engine   *scope.Engine
	robots   *robots.Cache
	recent   *recentdb.DB
	fetcher  *fetch.Fetcher
	scanner  *clamav.Client
	ca       *mitm.CA
	producer *kgo.Client
	metrics  *metrics

	// Opened by Run.
	pool  *browser.Pool
	warc  *warcwriter.Writer
	viral *warcwriter.Writer
	clog  *crawllog.Writer
	tabs  chan int // free thread numbers, one per tab
	// ready is closed once Run has opened the outputs and the browser, so
	// an API request that arrives before waits instead of racing open.
	ready chan struct{}

	// ytdlp is the yt-dlp executable, "" when there is none (media.go).
	ytdlp string

	// rdb holds the identity leases, the renderer's and its janitor's.
	rdb redis.UniversalClient
	// idLease holds the renderer's identity (cfg.ID) while it runs; nil
	// when the caller owns the directories (identity.go).
	idLease *identity.Lease

	// qaResolver and qaMetrics serve replay QA (qa.go); nil when off.
	qaResolver *replay.Resolver
	qaMetrics  *qa.Metrics
}

// New builds a renderer; Run starts the browser and consumes hand-offs.
func New(cfg Config, d Deps) (*Renderer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("renderer config: %w", err)
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
	p := d.Profile
	if cfg.ClamdAddr != "" {
		p.ClamAV.Address = cfg.ClamdAddr
	}
	r := &Renderer{cfg: cfg, prof: p, log: d.Logger.With("role", "renderer", "renderer", cfg.ID), kcfg: d.Kafka,
		reg: d.Registerer, version: d.Version, ua: p.UserAgent(d.Version), prefix: p.WARC.Prefix + "-WEBRENDER",
		tabs: make(chan int, cfg.Tabs), ready: make(chan struct{}), rdb: d.Redis, idLease: l}
	for i := range cfg.Tabs {
		r.tabs <- i
	}
	if err := r.build(d); err != nil {
		r.closeParts()
		return nil, errors.Join(err, l.Release())
	}
	return r, nil
}

func (r *Renderer) build(d Deps) error {
	var err error
	ctx := context.Background()
	statePrefix := "trawler:" + r.cfg.name() + ":"
	if r.sheets, err = sheets.New(ctx, r.prof, sheets.Options{Logger: r.log, Redis: d.Redis, KeyPrefix: statePrefix}); err != nil {
		return fmt.Errorf("renderer sheets: %w", err)
	}
	// The scope engine is built for its exclusions (the profile's file and
	// operators' commands in Redis); embeds are transclusions and are not
	// judged by the scope's other rules, as with Heritrix and warcprox.
	if r.engine, err = scope.New(r.prof.Scope, scope.Options{Logger: r.log, BaseDir: r.cfg.DataDir, LogDir: r.cfg.DataDir,
		Exclusions: scope.NewExclusions(d.Redis, statePrefix)}); err != nil {
		return fmt.Errorf("renderer scope: %w", err)
	}
	if r.robots, err = robots.NewCache(d.Redis, statePrefix+"robots:", robots.CacheOptions{
		Validity: time.Duration(r.prof.Robots.ValidityDurationSeconds) * time.Second, Logger: r.log}); err != nil {
		return fmt.Errorf("renderer robots cache: %w", err)
	}
	if r.recent, err = recentdb.New(d.Redis, recentdb.Options{Crawl: r.cfg.Crawl, Stream: r.cfg.stream(), Logger: r.log}); err != nil {
		return fmt.Errorf("renderer recently-crawled DB: %w", err)
	}
	if r.fetcher, err = newFetcher(r.cfg, r.prof, r.ua, d.Resolver, r.log); err != nil {
		return err
	}
	if r.prof.ClamAV.Address == "" {
		r.log.Warn("virus scanning is off: no clamav.address in the profile and no --clamd-addr")
	} else if r.scanner, err = clamav.New(clamav.Options{
		Address: r.prof.ClamAV.Address, Timeout: time.Duration(r.prof.ClamAV.TimeoutSeconds) * time.Second,
		Retries: r.prof.ClamAV.Retries, StreamMaxLength: r.prof.ClamAV.StreamMaxLengthBytes, Logger: r.log,
	}); err != nil {
		return fmt.Errorf("renderer clamav: %w", err)
	}
	if r.ca, err = mitm.NewCA(); err != nil {
		return fmt.Errorf("renderer proxy CA: %w", err)
	}
	if r.metrics, err = newMetrics(r.reg); err != nil {
		return fmt.Errorf("renderer metrics: %w", err)
	}
	if r.producer, err = kafka.NewClient(d.Kafka, kgo.AllowAutoTopicCreation()); err != nil {
		return fmt.Errorf("renderer producer: %w", err)
	}
	r.findYtDlp()
	return r.buildQA()
}

// newFetcher is the proxy's fetcher: the profile's timeouts, length cap,
// user agent and address guard, spooling under the renderer's directory.
func newFetcher(cfg Config, p profile.Profile, ua string, res fetch.Resolver, log *slog.Logger) (*fetch.Fetcher, error) {
	allowed, err := profile.AllowedPrefixes(p.Fetch.AllowAddresses)
	if err != nil {
		return nil, fmt.Errorf("renderer: %w", err)
	}
	fc := fetch.Config{
		UserAgent: ua, ConnectTimeout: time.Duration(p.Fetch.ConnectTimeoutSeconds) * time.Second,
		ReadTimeout:  time.Duration(p.Fetch.ReadTimeoutSeconds) * time.Second,
		TotalTimeout: time.Duration(p.Fetch.TotalTimeoutSeconds) * time.Second, MaxLengthBytes: p.Fetch.MaxLengthBytes,
		SpoolThreshold: p.Fetch.SpoolThresholdBytes, SpoolDir: cfg.SpoolDir(), AllowPrivate: p.Fetch.AllowPrivateAddresses,
		AllowAddresses: allowed, KeepAlive: true, MaxIdlePerHost: 6, Proxy: p.Fetch.Proxy,
	}
	if err := fc.Validate(); err != nil {
		return nil, fmt.Errorf("renderer: %w", err)
	}
	if err := os.MkdirAll(cfg.SpoolDir(), 0o755); err != nil {
		return nil, fmt.Errorf("renderer spool dir: %w", err)
	}
	// The identity, and so the directory, is ours now (the browser pool
	// reaps its own stale profiles).
	spool.RemoveStaleLogged(cfg.SpoolDir(), log, warcwriter.BufferFilePrefix)
	if res == nil {
		res = defaultResolver{}
	}
	return fetch.New(fc, res), nil
}

func (r *Renderer) closeParts() {
	if r.engine != nil {
		_ = r.engine.Close()
	}
	if r.fetcher != nil {
		_ = r.fetcher.Close()
	}
	if r.producer != nil {
		r.producer.Close()
	}
}

// Run starts the browser, opens the WARC files and crawl.log, serves the
// render API when configured and consumes the torender topic until ctx
// ends. Renders in progress at shutdown are not committed: another
// renderer (or this one, restarted) does them again. With a leased
// identity it runs the janitor, releases the identity last, and stops
// the same way, with an error wrapping identity.ErrLost, when the lease is
// taken over.
func (r *Renderer) Run(ctx context.Context) (err error) {
	// Deferred first so that it runs last: the identity is given up only
	// once its files are closed.
	defer func() {
		if rerr := r.idLease.Release(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("renderer identity: %w", rerr))
		}
	}()
	defer r.closeParts()
	ctx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	go r.watchIdentity(ctx, cancelRun)
	defer func() {
		if cause := context.Cause(ctx); errors.Is(cause, identity.ErrLost) {
			err = errors.Join(err, cause)
		}
	}()
	if err := r.open(ctx); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.closeOutputs()) }()
	if r.idLease != nil && r.cfg.JanitorPeriod > 0 {
		// The janitor announces through the producer, so it is stopped
		// before closeParts closes it.
		var janitor sync.WaitGroup
		janitor.Go(func() { r.janitorLoop(ctx) })
		defer func() {
			cancelRun(nil)
			janitor.Wait()
		}()
	}
	api, err := r.startAPI(ctx)
	if err != nil {
		return err
	}
	defer api()
	c, err := kafka.NewConsumer(r.kcfg, kafka.ConsumerOptions[messages.Launch]{
		Group: r.cfg.Group(), Topics: []string{r.cfg.ToRenderTopic()}, DLQTopic: r.cfg.DLQTopic(),
		Decode: func(rec *kgo.Record) (messages.Launch, error) { return messages.DecodeLaunch(rec.Value) }, Handle: r.handle, Logger: r.log,
		Registerer: prometheus.WrapRegistererWith(prometheus.Labels{"consumer": "render"}, r.reg),
		MaxBatch:   r.cfg.Tabs, ShutdownGrace: r.cfg.PageTimeout,
		ClientOpts: []kgo.Opt{kgo.AllowAutoTopicCreation()},
	})
	if err != nil {
		return fmt.Errorf("renderer consumer: %w", err)
	}
	r.log.Info("renderer started", "topic", r.cfg.ToRenderTopic(), "tabs", r.cfg.Tabs, "warcs", r.cfg.WARCDir())
	return c.Run(ctx)
}
