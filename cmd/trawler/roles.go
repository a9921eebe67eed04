package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/explain"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/services/cdxwriter"
	"github.com/trawler-crawl/trawler/services/worker"
)

// roleEnv is what every long-running role gets after flag parsing.
type roleEnv struct {
	log     *slog.Logger
	reg     *prometheus.Registry
	admin   *admin.Server
	profile profile.Profile
}

// openRedis connects the role to Redis (one server, or a Redis Cluster
// given several addresses or --redis-cluster) and makes its /readyz
// depend on it.
func (env *roleEnv) openRedis(ctx context.Context, rc redisconn.Config) (redis.UniversalClient, error) {
	rdb, err := redisconn.OpenUniversal(ctx, rc, redisconn.WithLogger(env.log))
	if err != nil {
		return nil, err
	}
	env.admin.AddReadyCheck("redis", func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
	return rdb, nil
}

func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// setup builds logger, profile, registry and the admin listener.
func setup(c common, stderr io.Writer, role string) (*roleEnv, error) {
	log, err := newLogger(c.logFormat, c.logLevel, stderr)
	if err != nil {
		return nil, err
	}
	log = log.With("role", role)
	p, err := loadProfile(c)
	if err != nil {
		return nil, err
	}
	reg := newRegistry()
	adm, err := admin.Listen(c.adminAddr, reg, log)
	if err != nil {
		return nil, err
	}
	log.Info("started", "version", version, "admin", adm.Addr())
	return &roleEnv{log: log, reg: reg, admin: adm, profile: p}, nil
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func runWorker(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlagSet("worker", stderr)
	var c common
	var wc worker.Config
	var kc kafka.Config
	var rc redisconn.Config
	c.register(fs, ":9100")
	wc.RegisterFlags(fs)
	kc.RegisterFlags(fs)
	rc.RegisterFlags(fs)
	tokenFile := fs.String("admin-token-file", "", "file holding the bearer token of the admin API (/api/v1/); empty: API off")
	cdxURL := fs.String("cdx-url", "", "OutbackCDX-compatible API whose captures the admin API's explain lists (e.g. http://cdxwriter:8081)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := errorsJoin(wc.Validate(), kc.Validate(), rc.Validate()); err != nil {
		return err
	}
	token, err := admin.LoadToken(*tokenFile)
	if err != nil {
		return err
	}
	env, err := setup(c, stderr, "worker")
	if err != nil {
		return err
	}
	defer env.admin.Close()
	rdb, err := env.openRedis(ctx, rc)
	if err != nil {
		return err
	}
	defer rdb.Close()
	// The identity may be settled only by worker.New (a leased slot); the
	// client id names what is known now.
	kc.ClientID = "trawler-worker-" + cmp.Or(wc.ID, wc.Name())
	w, err := worker.New(wc, worker.Deps{Profile: env.profile, Kafka: kc, Redis: rdb, Logger: env.log,
		Registerer: env.reg, Version: version})
	if err != nil {
		return err
	}
	// Not ready while disk space is low: the worker claims nothing then.
	env.admin.AddReadyCheck("disk", w.DiskReady)
	var hist explain.History
	if *cdxURL != "" {
		hist = explain.CDXAPI{URL: *cdxURL, Collection: wc.Crawl}
	}
	h, closeAPI, err := api.Build(ctx, api.Setup{Profile: env.profile, Redis: rdb, Frontier: w.Frontier(), Kafka: kc,
		Crawl: wc.Crawl, Stream: wc.Stream, BaseDir: wc.DataDir, Version: version, History: hist,
		LimitReached: w.LimitReached, Logger: env.log})
	if err != nil {
		return err
	}
	defer closeAPI()
	if err := env.admin.MountAPI(token, h); err != nil {
		return err
	}
	err = w.Run(ctx)
	env.log.Info("stopped", "err", err)
	return err
}

func runCDXWriter(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlagSet("cdxwriter", stderr)
	var c common
	var cc cdxwriter.Config
	var kc kafka.Config
	var rc redisconn.Config
	c.register(fs, ":9100")
	cc.RegisterFlags(fs)
	kc.RegisterFlags(fs)
	rc.RegisterFlags(fs)
	tokenFile := fs.String("admin-token-file", "", "file holding the bearer token the CDX API's POST ingest and delete need; empty: writes are open")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := errorsJoin(cc.Validate(), kc.Validate(), rc.Validate()); err != nil {
		return err
	}
	token, err := admin.LoadToken(*tokenFile)
	if err != nil {
		return err
	}
	env, err := setup(c, stderr, "cdxwriter")
	if err != nil {
		return err
	}
	defer env.admin.Close()
	rdb, err := env.openRedis(ctx, rc)
	if err != nil {
		return err
	}
	defer rdb.Close()
	kc.ClientID = "trawler-cdxwriter"
	// The index is opened here rather than by the writer so that its
	// OutbackCDX API on --cdx-addr can require the token for writes.
	ix, err := cdxindex.Open(cc.IndexDir(), cdxindex.Options{Logger: env.log.With("part", "index"), Registerer: env.reg})
	if err != nil {
		return fmt.Errorf("cdxwriter: %w", err)
	}
	defer ix.Close()
	if token == "" {
		env.log.Info("CDX API writes are open: no admin token configured (--admin-token-file)")
	} else {
		env.log.Info("CDX API writes (POST ingest, delete) need the admin token")
	}
	w, err := cdxwriter.New(cc, cdxwriter.Deps{Kafka: kc, Redis: rdb, Logger: env.log, Registerer: env.reg,
		Index: ix, API: ix.Handler(cdxindex.HandlerOptions{WriteToken: token})})
	if err != nil {
		return err
	}
	err = w.Run(ctx)
	env.log.Info("stopped", "err", err)
	return err
}

func errorsJoin(errs ...error) error {
	var msgs []string
	for _, e := range errs {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid configuration: %s", strings.Join(msgs, "; "))
}
