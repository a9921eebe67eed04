package main

import (
	"cmp"
	"context"
	"errors"
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
	"github.com/trawler-crawl/trawler/pkg/console"
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
	// Not ready while it waits, which can be minutes (a loading Redis).
	env.admin.AddReadyCheck("redis", func(context.Context) error { return errWaitingForRedis })
	rdb, err := redisconn.OpenUniversal(ctx, rc, redisconn.WithLogger(env.log))
	if err != nil {
		return nil, err
	}
	env.admin.AddReadyCheck("redis", func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
	return rdb, nil
}

// errWaitingForRedis is /readyz's answer while a role waits for Redis.
var errWaitingForRedis = errors.New("waiting for Redis to answer")

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
	log.Info("started", "version", buildVersion(), "admin", adm.Addr())
	return &roleEnv{log: log, reg: reg, admin: adm, profile: p}, nil
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// serviceFlags are the flags every long-running role on Kafka and Redis
// shares: the common ones, the broker's and Redis's.
type serviceFlags struct {
	c  common
	kc kafka.Config
	rc redisconn.Config
}

func (sf *serviceFlags) register(fs *flag.FlagSet) {
	sf.c.register(fs, ":9100")
	sf.kc.RegisterFlags(fs)
	sf.rc.RegisterFlags(fs)
}

// start parses args, checks them (the role's own settings and files with
// check, before anything connects, so a mistake fails at once; check
// must read the settings when called, after parsing, so not a method
// value of a Config, which copies it), and
// brings up the role's logger, profile, admin listener and Redis; stop
// releases the listener and Redis.
func (sf *serviceFlags) start(ctx context.Context, fs *flag.FlagSet, args []string, stderr io.Writer,
	role string, check func() error) (env *roleEnv, rdb redis.UniversalClient, stop func(), err error) {
	if err := parse(fs, args); err != nil {
		return nil, nil, nil, err
	}
	if err := errorsJoin(check(), sf.kc.Validate(), sf.rc.Validate()); err != nil {
		return nil, nil, nil, err
	}
	if env, err = setup(sf.c, stderr, role); err != nil {
		return nil, nil, nil, err
	}
	if rdb, err = env.openRedis(ctx, sf.rc); err != nil {
		_ = env.admin.Close()
		return nil, nil, nil, err
	}
	return env, rdb, func() { _ = rdb.Close(); _ = env.admin.Close() }, nil
}

// tokenFlags are the admin API's token files.
type tokenFlags struct {
	operator, readOnly string
}

func (tf *tokenFlags) register(fs *flag.FlagSet, operatorUsage string) {
	fs.StringVar(&tf.operator, "admin-token-file", "", operatorUsage)
	fs.StringVar(&tf.readOnly, "admin-readonly-token-file", "", "file holding a second bearer token of the admin API that may only read (GET), for viewers; re-read when it changes")
}

// check opens the files once, so a missing or bad one fails before
// anything starts; open opens them for the run, with the role's logger
// (which then reports reloads).
func (tf *tokenFlags) check() error {
	_, err := admin.OpenTokens(tf.operator, tf.readOnly, nil)
	return err
}

func (tf *tokenFlags) open(log *slog.Logger) (admin.Tokens, error) {
	return admin.OpenTokens(tf.operator, tf.readOnly, log)
}

func runWorker(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlagSet("worker", stderr)
	var sf serviceFlags
	var wc worker.Config
	var tf tokenFlags
	var cc console.Config
	sf.register(fs)
	wc.RegisterFlags(fs)
	cc.RegisterFlags(fs)
	tf.register(fs, "file holding the bearer token of the admin API (/api/v1/) and the console (/console/), re-read when it changes; empty: both off")
	cdxURL := fs.String("cdx-url", "", "OutbackCDX-compatible API whose captures the admin API's explain lists (e.g. http://cdxwriter:8081)")
	env, rdb, stop, err := sf.start(ctx, fs, args, stderr, "worker", func() (err error) {
		if err = wc.Validate(); err == nil {
			err = tf.check()
		}
		if err == nil {
			err = cc.Validate()
		}
		return err
	})
	if err != nil {
		return err
	}
	defer stop()
	tokens, err := tf.open(env.log)
	if err != nil {
		return err
	}
	kc := sf.kc
	// The identity may be settled only by worker.New (a leased slot); the
	// client id names what is known now.
	kc.ClientID = "trawler-worker-" + cmp.Or(wc.ID, wc.Name())
	w, err := worker.New(wc, worker.Deps{Profile: env.profile, Kafka: kc, Redis: rdb, Logger: env.log,
		Registerer: env.reg, Version: buildVersion()})
	if err != nil {
		return err
	}
	// Not ready while disk space is low or writes fail: the worker
	// claims nothing then.
	env.admin.AddReadyCheck("disk", w.DiskReady)
	env.admin.AddReadyCheck("writes", w.WritesReady)
	var hist explain.History
	if *cdxURL != "" {
		hist = explain.CDXAPI{URL: *cdxURL, Collection: wc.Crawl}
	}
	ad, closeAPI, err := api.BuildDeps(ctx, api.Setup{Profile: env.profile, Redis: rdb, Frontier: w.Frontier(), Kafka: kc,
		Crawl: wc.Crawl, Stream: wc.Stream, BaseDir: wc.DataDir, Version: buildVersion(), History: hist,
		LimitReached: w.LimitReached, Logger: env.log})
	if err != nil {
		return err
	}
	defer closeAPI()
	if err := env.admin.MountAPI(tokens, api.Handler(ad)); err != nil {
		return err
	}
	if tokens.Configured() {
		// Whatever serves the API serves the console, over the same deps.
		con, err := console.New(cc, console.Deps{API: ad, Tokens: tokens, Redis: rdb, Gatherer: env.reg,
			Files: console.Files{DataDir: wc.DataDir, LogDir: wc.LogDir()}, Logger: env.log.With("part", "console")})
		if err != nil {
			return err
		}
		if err := env.admin.MountConsole(tokens, con); err != nil {
			return err
		}
	}
	err = w.Run(ctx)
	env.log.Info("stopped", "err", err)
	return err
}

func runCDXWriter(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlagSet("cdxwriter", stderr)
	var sf serviceFlags
	var cc cdxwriter.Config
	var tf tokenFlags
	sf.register(fs)
	cc.RegisterFlags(fs)
	// The read-only token is refused writes with a 403 that says why.
	tf.register(fs, "file holding the bearer token the CDX API's writes (POST ingest, delete, checkpoint) need, re-read when it changes; empty: writes refused, unless --cdx-writes-open")
	env, rdb, stop, err := sf.start(ctx, fs, args, stderr, "cdxwriter", func() (err error) {
		if err = cc.Validate(); err == nil {
			err = tf.check()
		}
		if err == nil {
			if _, err = admin.OpenTokenFile(cc.ForwardTokenFile, nil); err != nil {
				err = fmt.Errorf("forward-token-file: %w", err)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	defer stop()
	tokens, err := tf.open(env.log)
	if err != nil {
		return err
	}
	kc := sf.kc
	kc.ClientID = "trawler-cdxwriter"
	// The index is opened here rather than by the writer so that its
	// OutbackCDX API on --cdx-addr can require the token for writes.
	ix, err := cdxindex.Open(cc.IndexDir(), cdxindex.Options{Logger: env.log.With("part", "index"), Registerer: env.reg})
	if err != nil {
		return fmt.Errorf("cdxwriter: %w", err)
	}
	defer ix.Close()
	w, err := cdxwriter.New(cc, cdxwriter.Deps{Kafka: kc, Redis: rdb, Logger: env.log, Registerer: env.reg,
		Index: ix, API: ix.Handler(cc.APIOptions(tokens, env.log))})
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
