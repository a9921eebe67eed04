package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/services/launcher"
)

const launcherUsage = `usage: trawler launcher <verb> [flags]

verbs:
  run     launch the targets due this hour (one shot, for a CronJob); --at for another hour, --dry-run to print
  serve   the hourly scheduler: runs at the top of every hour, serves /metrics /healthz /readyz
  bulk    stream a large seed list into dc.tocrawl (resumable) and write its SURT scope file
  export  write watched targets (--watched) and NEVERCRAWL targets as excluded SURTs (--excluded)`

func runLauncher(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	verb, rest, err := sub(args, verbs()["launcher"]...)
	if err != nil {
		fmt.Fprintln(stderr, launcherUsage)
		return err
	}
	switch verb {
	case "serve":
		return launcherServe(ctx, rest, stderr)
	case "bulk":
		return launcherBulk(ctx, rest, stderr)
	case "export":
		return launcherExport(ctx, rest, stderr)
	}
	return launcherRun(ctx, rest, stdout, stderr)
}

// logFlags are the logging flags of the launcher's one-shot verbs, which
// have no profile and no admin listener.
type logFlags struct{ format, level string }

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.format, "log-format", "auto", "log format: json, text, or auto (text on a terminal)")
	fs.StringVar(&l.level, "log-level", "info", "log level: debug, info, warn, error")
}

func launcherRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("launcher run", stderr)
	var lf logFlags
	var lc launcher.Config
	var kc kafka.Config
	var rc redisconn.Config
	lf.register(fs)
	lc.RegisterFlags(fs)
	kc.RegisterFlags(fs)
	rc.RegisterFlags(fs)
	at := fs.String("at", "", "run the decision for the hour holding this time (RFC 3339, e.g. 2024-01-17T09:00:00Z) instead of now")
	if err := parse(fs, args); err != nil {
		return err
	}
	when := time.Now()
	if *at != "" {
		t, err := time.Parse(time.RFC3339, *at)
		if err != nil {
			return fmt.Errorf("--at %q: want an RFC 3339 time such as 2024-01-17T09:00:00Z", *at)
		}
		when = t
	}
	if err := errorsJoin(lc.Validate(), kc.Validate(), rc.Validate(), checkLocalFeeds(lc.Feeds)); err != nil {
		return err
	}
	log, err := newLogger(lf.format, lf.level, stderr)
	if err != nil {
		return err
	}
	deps := launcher.Deps{Logger: log.With("role", "launcher"), Out: stdout}
	if !lc.DryRun {
		_, closeAll, err := launchDeps(ctx, &deps, lc, kc, rc, log)
		if err != nil {
			return err
		}
		defer closeAll()
	}
	svc, err := launcher.New(lc, deps)
	if err != nil {
		return err
	}
	sum, err := svc.RunOnce(ctx, when)
	fmt.Fprintf(stderr, "launcher: %s\n", sum)
	printLineErrors(stderr, sum.Errors, sum.BadLines)
	return err
}

// launchDeps opens Redis and Kafka and fills the producer, key function
// and ledger in; closeAll releases them.
func launchDeps(ctx context.Context, deps *launcher.Deps, lc launcher.Config, kc kafka.Config, rc redisconn.Config,
	log *slog.Logger) (rdb *redis.Client, closeAll func(), err error) {
	rdb, err = redisconn.Open(ctx, rc, redisconn.WithLogger(log))
	if err != nil {
		return nil, nil, err
	}
	ledger, err := launcher.NewRedisLedger(rdb, "", lc.ClaimTTL, lc.RecordTTL)
	if err != nil {
		_ = rdb.Close()
		return nil, nil, err
	}
	cl, err := launcherClient(kc, log)
	if err != nil {
		_ = rdb.Close()
		return nil, nil, err
	}
	deps.Producer, deps.KeyFunc, deps.Ledger = launcher.NewKafkaProducer(cl), hostkey.ForURL, ledger
	return rdb, func() { cl.Close(); _ = rdb.Close() }, nil
}

func launcherClient(kc kafka.Config, log *slog.Logger, extra ...kgo.Opt) (*kgo.Client, error) {
	if kc.ClientID == kafka.DefaultClientID {
		kc.ClientID = "trawler-launcher"
	}
	return kafka.NewClient(kc, append([]kgo.Opt{kafka.WithSlog(log)}, extra...)...)
}

func launcherServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("launcher serve", stderr)
	var c common
	var lc launcher.Config
	var kc kafka.Config
	var rc redisconn.Config
	c.register(fs, ":9100")
	lc.RegisterFlags(fs)
	kc.RegisterFlags(fs)
	rc.RegisterFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := errorsJoin(lc.Validate(), kc.Validate(), rc.Validate(), checkLocalFeeds(lc.Feeds)); err != nil {
		return err
	}
	env, err := setup(c, stderr, "launcher")
	if err != nil {
		return err
	}
	defer env.admin.Close()
	deps := launcher.Deps{Logger: env.log, Registerer: env.reg}
	if lc.DryRun {
		deps.Out = stderr
	} else {
		rdb, closeAll, err := launchDeps(ctx, &deps, lc, kc, rc, env.log)
		if err != nil {
			return err
		}
		defer closeAll()
		env.admin.AddReadyCheck("redis", func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
	}
	svc, err := launcher.New(lc, deps)
	if err != nil {
		return err
	}
	err = svc.Serve(ctx)
	env.log.Info("stopped", "err", err)
	return err
}

func launcherBulk(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("launcher bulk", stderr)
	var lf logFlags
	var bc launcher.BulkConfig
	var kc kafka.Config
	var rc redisconn.Config
	lf.register(fs)
	bc.RegisterFlags(fs)
	kc.RegisterFlags(fs)
	rc.RegisterFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := errorsJoin(bc.Validate(), kc.Validate(), rc.Validate()); err != nil {
		return err
	}
	log, err := newLogger(lf.format, lf.level, stderr)
	if err != nil {
		return err
	}
	rdb, err := redisconn.Open(ctx, rc, redisconn.WithLogger(log))
	if err != nil {
		return err
	}
	defer func() { _ = rdb.Close() }()
	cl, err := launcherClient(kc, log)
	if err != nil {
		return err
	}
	defer cl.Close()
	sum, err := launcher.Bulk(ctx, bc, launcher.BulkDeps{
		Producer: kafka.NewProducer(cl), KeyFunc: hostkey.ForURL, Logger: log.With("role", "launcher"),
		Checkpoints: launcher.NewRedisCheckpoints(rdb, "", bc.Topic()),
	})
	fmt.Fprintf(stderr, "launcher: %s\n", sum)
	printLineErrors(stderr, sum.Errors, sum.BadLines)
	return err
}

func launcherExport(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("launcher export", stderr)
	var lf logFlags
	var ec launcher.ExportConfig
	lf.register(fs)
	ec.RegisterFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := ec.Validate(); err != nil {
		return err
	}
	if err := checkLocalFeeds(ec.Feeds); err != nil {
		return err
	}
	log, err := newLogger(lf.format, lf.level, stderr)
	if err != nil {
		return err
	}
	sum, err := launcher.Export(ctx, ec, launcher.ExportDeps{Logger: log.With("role", "launcher")})
	fmt.Fprintf(stderr, "launcher: %s\n", sum)
	printLineErrors(stderr, sum.Errors, sum.BadLines)
	return err
}

func printLineErrors(w io.Writer, errs []launcher.LineError, total int) {
	for _, e := range errs {
		fmt.Fprintf(w, "  bad line %v\n", e)
	}
	if n := total - len(errs); n > 0 {
		fmt.Fprintf(w, "  and %d more bad lines\n", n)
	}
}

// checkLocalFeeds fails on a --feed file or directory that is not there,
// before the launcher connects to anything (a URL is fetched by the run).
func checkLocalFeeds(feeds []string) error {
	var errs []string
	for _, f := range feeds {
		if strings.HasPrefix(f, "http://") || strings.HasPrefix(f, "https://") {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, fmt.Sprintf("--feed %s: %v", f, errors.Unwrap(err)))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "; "))
}
