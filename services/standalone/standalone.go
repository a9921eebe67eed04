package standalone

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"

	kafkatopics "github.com/trawler-crawl/trawler/kafka-topics"
	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/control"
	"github.com/trawler-crawl/trawler/pkg/embedded"
	"github.com/trawler-crawl/trawler/pkg/explain"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/pkg/reports"
	"github.com/trawler-crawl/trawler/services/cdxwriter"
	"github.com/trawler-crawl/trawler/services/launcher"
	"github.com/trawler-crawl/trawler/services/renderer"
	"github.com/trawler-crawl/trawler/services/worker"
)

// Deps are what the caller injects.
type Deps struct {
	Profile  profile.Profile
	Resolver fetch.Resolver // nil: system resolver
	Logger   *slog.Logger
	Registry *prometheus.Registry
	Version  string
	// Out receives the lines saying where the run listens, printed at its
	// start; nil: not printed.
	Out io.Writer
	// Clock stamps the launches (a relaunch waits for it to reach a new
	// second, so it must advance); nil is the system clock.
	Clock launcher.Clock
}

// cluster is the broker and Redis the roles talk to, embedded or external.
type cluster struct {
	kafka kafka.Config
	rdb   *redis.Client
	// unlock frees the data directory after the servers (the embedded
	// broker and redis-server) stop, which they do at once: neither needs
	// the other to write its state, and each takes tens of milliseconds.
	unlock   func() error
	servers  []func() error
	rdbClose func() error
	redisK   string
	// redisAddr is where Redis answers (the embedded one's chosen port).
	redisAddr string
}

func (c *cluster) Close() error {
	var errs []error
	if c.rdbClose != nil {
		errs = append(errs, c.rdbClose())
	}
	stopped := make([]error, len(c.servers))
	var wg sync.WaitGroup
	for i, stop := range c.servers {
		wg.Go(func() { stopped[i] = stop() })
	}
	wg.Wait()
	errs = append(errs, stopped...)
	if c.unlock != nil {
		errs = append(errs, c.unlock())
	}
	return errors.Join(errs...)
}

// lockDataDir keeps two standalone runs off one data directory.
func lockDataDir(dir string) (func() error, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("data dir %s is in use by another trawler process: %w", dir, err)
	}
	return f.Close, nil
}

// startCluster locks the data directory and starts the embedded broker
// (on kafkaLn, bound by bindListeners) and Redis, or connects to the
// external ones.
func startCluster(ctx context.Context, cfg Config, kafkaLn net.Listener, log *slog.Logger) (*cluster, error) {
	c := &cluster{}
	unlock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	c.unlock = unlock
	if cfg.Kafka != "" {
		c.kafka = kafka.Config{Brokers: strings.Split(cfg.Kafka, ","), ClientID: "trawler-standalone"}
	} else {
		var k *embedded.Kafka
		pprof.Do(ctx, pprof.Labels("stage", "broker"), func(ctx context.Context) {
			k, err = embedded.StartKafka(ctx, embedded.KafkaOptions{
				DataDir: filepath.Join(cfg.DataDir, "kafka"), Listener: kafkaLn, Logger: log,
			})
		})
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		c.servers = append(c.servers, k.Close)
		c.kafka = kafka.Config{Brokers: k.Brokers(), ClientID: "trawler-standalone"}
		log.Info("embedded Kafka broker started", "addr", k.Brokers())
	}
	// The topics are created while redis-server starts: each takes a
	// few hundred milliseconds of an empty crawl's start.
	topics := make(chan error, 1)
	go func() { topics <- applyTopics(ctx, c.kafka, cfg.Partitions, log) }()
	addr := cfg.Redis
	c.redisK = "external"
	if addr == "" {
		r, err := embedded.StartRedis(ctx, embedded.RedisOptions{DataDir: filepath.Join(cfg.DataDir, "redis"), Logger: log})
		if err != nil {
			<-topics
			_ = c.Close()
			return nil, err
		}
		c.servers = append(c.servers, r.Close)
		addr, c.redisK = r.Addr(), r.Kind()
		log.Info("embedded Redis started", "addr", addr, "kind", r.Kind())
	}
	if err := <-topics; err != nil {
		_ = c.Close()
		return nil, err
	}
	rdb, err := redisconn.Open(ctx, redisconn.Config{Addr: addr, Password: cfg.RedisPassword})
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	c.rdb, c.redisAddr = rdb, addr
	c.rdbClose = rdb.Close
	return c, nil
}

func applyTopics(ctx context.Context, kc kafka.Config, partitions int, log *slog.Logger) error {
	specs, err := kafka.ParseTopics(kafkatopics.Default())
	if err != nil {
		return err
	}
	cl, err := kafka.NewClient(kc)
	if err != nil {
		return err
	}
	defer cl.Close()
	rep, err := kafka.ApplyTopics(ctx, kadm.NewClient(cl), specs, int32(partitions))
	if err != nil {
		return fmt.Errorf("apply topics: %w", err)
	}
	log.Debug("topics applied", "report", fmt.Sprintf("%+v", rep))
	return nil
}

// Run runs the standalone crawl until ctx is cancelled or, with
// UntilIdle, until the crawl is idle; it returns the summary.
func Run(ctx context.Context, cfg Config, d Deps) (*Summary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := d.Logger
	started := time.Now()
	var ph phases
	ph.start(started)
	// The given token files are checked before anything starts; a
	// generated one is written once the data directory is locked.
	if _, err := admin.OpenTokens(cfg.AdminTokenFile, cfg.AdminReadOnlyTokenFile, nil); err != nil {
		return nil, err
	}
	if _, err := admin.OpenTokenFile(cfg.CDXForwardTokenFile, nil); err != nil {
		return nil, fmt.Errorf("cdx-forward-token-file: %w", err)
	}
	clock := d.Clock
	if clock == nil {
		clock = systemClock{}
	}
	// Everything the run was given is checked, and its ports bound,
	// before the data directory, the broker or Redis exist (input.go).
	if err := checkFeeds(ctx, cfg, clock.Now(), log); err != nil {
		return nil, err
	}
	wcfg := worker.Config{Crawl: cfg.Crawl, Stream: cfg.Stream, ID: "standalone", Threads: cfg.Threads,
		DataDir: cfg.DataDir, Lease: 5 * time.Minute, ClamdAddr: cfg.ClamdAddr,
		Disk: worker.DiskConfig{MinFreeBytes: cfg.MinFreeDiskBytes}}
	rcfg, err := rendererConfig(cfg, d.Profile, &wcfg, log)
	if err != nil {
		return nil, err
	}
	lns, err := bindListeners(cfg)
	if err != nil {
		return nil, err
	}
	defer lns.Close()
	ph.mark("checks")
	cl, err := startCluster(ctx, cfg, lns.kafka, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := cl.Close(); err != nil {
			log.Warn("stop cluster", "err", err)
		}
	}()
	ph.mark("cluster")
	tokens, tokenFile, err := adminTokens(cfg, log) // token.go
	if err != nil {
		return nil, err
	}
	adm := admin.Serve(lns.admin, d.Registry, log)
	defer adm.Close()
	adm.AddReadyCheck("redis", func(ctx context.Context) error { return cl.rdb.Ping(ctx).Err() })

	w, err := worker.New(wcfg, worker.Deps{Profile: d.Profile, Kafka: cl.kafka, Redis: cl.rdb,
		Resolver: d.Resolver, Logger: log.With("role", "worker"), Registerer: d.Registry, Version: d.Version})
	if err != nil {
		return nil, err
	}
	// Not ready while the worker claims nothing for a full disk or
	// failing writes.
	adm.AddReadyCheck("disk", w.DiskReady)
	adm.AddReadyCheck("writes", w.WritesReady)
	ph.mark("worker")
	if err := recoverFrontier(ctx, cfg, cl, w, wcfg, d.Profile, log); err != nil {
		return nil, err
	}
	ccfg := cdxwriter.Config{Crawl: cfg.Crawl, Stream: cfg.Stream, DataDir: cfg.DataDir, CDXAddr: cfg.CDXAddr,
		CDXWritesOpen: cfg.CDXWritesOpen, ForwardURL: cfg.CDXForwardURL, ForwardTokenFile: cfg.CDXForwardTokenFile,
		ForwardFailures: cfg.CDXForwardFailures}
	ph.mark("recover")
	ix, err := cdxindex.Open(ccfg.IndexDir(), cdxindex.Options{Logger: log.With("role", "cdxindex"), Registerer: d.Registry})
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	cdeps := cdxwriter.Deps{Kafka: cl.kafka, Redis: cl.rdb, Index: ix, Logger: log.With("role", "cdxwriter"), Registerer: d.Registry}
	if lns.cdx != nil {
		cdeps.API, cdeps.APIListener = ix.Handler(ccfg.APIOptions(tokens, cdeps.Logger)), lns.cdx
	}
	ph.mark("index")
	apiDeps, closeAPI, err := api.BuildDeps(ctx, api.Setup{Profile: d.Profile, Redis: cl.rdb, Frontier: w.Frontier(),
		Kafka: cl.kafka, Crawl: cfg.Crawl, Stream: cfg.Stream, BaseDir: cfg.DataDir, Version: d.Version,
		History:      explain.CDXAPI{Handler: ix.Handler(cdxindex.HandlerOptions{ReadOnly: true}), Collection: cfg.Crawl},
		LimitReached: w.LimitReached, Logger: log.With("role", "api")})
	if err != nil {
		return nil, err
	}
	defer closeAPI()
	if err := adm.MountAPI(tokens, api.Handler(apiDeps)); err != nil {
		return nil, err
	}
	if err := mountConsole(adm, cfg, d, apiDeps, tokens, cl.rdb, wcfg, rcfg, ix, log); err != nil { // console.go
		return nil, err
	}
	cw, err := cdxwriter.New(ccfg, cdeps)
	if err != nil {
		return nil, err
	}

	if cfg.Relaunch {
		// A relaunch is a new job run: maxTimeSeconds counts from now, as
		// Heritrix's elapsed time is per run. Without it a run on the same
		// data directory continues the crawl, and its clock.
		if err := w.Frontier().RestartCrawlClock(ctx); err != nil {
			return nil, err
		}
		// A new launch also lifts an operator's terminate of the last one.
		if err := control.ClearTerminated(ctx, cl.rdb, w.Frontier().Prefix()); err != nil {
			return nil, err
		}
	}
	pv, err := newProvenance(cfg, d, cl, w, wcfg, log) // provenance.go
	if err != nil {
		return nil, err
	}
	// Each role's goroutines carry a "stage" profiler label (the worker's
	// tasks label their own stages inside), so a CPU profile of the
	// process, as `trawler bench` takes, tells the roles apart.
	roles := []func(context.Context) error{labelled("worker", w.Run), labelled("index", cw.Run), labelled("provenance", pv.Run)}
	rule := idleRule{untilIdle: cfg.UntilIdle, ignoreRetries: cfg.UntilIdleIgnoreRetries}
	if ccfg.ForwardURL != "" {
		// Lines still to forward when the run ends would wait for the
		// next run: the external index must have the whole crawl too.
		rule.groups = append(rule.groups, [2]string{ccfg.ForwardGroup(), ccfg.Topic()})
	}
	if rcfg != nil {
		rule.groups = append(rule.groups, [2]string{rcfg.Group(), rcfg.ToRenderTopic()})
		rcfg.ClamdAddr = cfg.ClamdAddr
		rn, err := renderer.New(*rcfg, renderer.Deps{Profile: d.Profile, Kafka: cl.kafka, Redis: cl.rdb, Resolver: d.Resolver,
			Logger: log.With("role", "renderer"), Registerer: d.Registry, Version: d.Version})
		if err != nil {
			return nil, err
		}
		roles = append(roles, labelled("render", rn.Run))
	}
	ph.mark("api")
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, len(roles))
	for _, role := range roles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := role(runCtx)
			if err != nil && !errors.Is(err, context.Canceled) {
				stop() // a role that fails ends the run rather than leaving it idle forever
			}
			errs <- err
		}()
	}
	launched, feedSum, err := launch(ctx, cfg, cl.kafka, wcfg, clock, log)
	if err != nil {
		stop()
		wg.Wait()
		return nil, err
	}
	log.Info("launched", "urls", launched)
	ends := Endpoints{PID: os.Getpid(), Redis: cl.redisAddr, Kafka: cl.kafka.Brokers, Admin: adm.Addr(), CDX: lns.cdxAddr(),
		AdminTokenFile: tokenFile}
	if remove, err := writeEndpoints(cfg.DataDir, ends); err != nil {
		log.Warn("say where this standalone listens", "err", err)
	} else {
		defer remove()
	}
	printListeners(d.Out, cfg.DataDir, ends, cfg.Crawl)

	ph.mark("launch")
	endedBy, waitErr := waitEnd(runCtx, cl, w, wcfg, ccfg, rule, started, log)
	ph.mark("idle")
	provErr := endProvenance(ctx, pv, endedBy) // before stop: its consumer must catch up
	stop()
	wg.Wait()
	close(errs)
	all := []error{provErr}
	if waitErr != nil && !errors.Is(waitErr, context.Canceled) {
		all = append(all, waitErr)
	}
	for e := range errs {
		if e != nil && !errors.Is(e, context.Canceled) {
			all = append(all, e)
		}
	}
	ph.mark("stop")
	sum, err := summarise(context.WithoutCancel(ctx), cfg, wcfg, ccfg, w, cl.rdb, ix, time.Since(started), cl.redisK)
	all = append(all, err)
	if sum != nil {
		sum.Launched, sum.Feed, sum.EndedBy = launched, feedSum, endedBy
		info := reports.RunInfo{Start: started, End: time.Now(), Status: crawlStatus(endedBy)}
		all = append(all, writeReports(context.WithoutCancel(ctx), cl, cfg, wcfg, w, d.Profile.Crawl.Name, info, log))
		sum.ReportsDir = ReportsDir(cfg.DataDir)
		ph.mark("reports")
		sum.Phases = ph.list
	}
	return sum, errors.Join(all...)
}

// labelled runs role with the profiler label stage=name on its goroutine
// and those it starts.
func labelled(name string, role func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) (err error) {
		pprof.Do(ctx, pprof.Labels("stage", name), func(ctx context.Context) { err = role(ctx) })
		return err
	}
}
