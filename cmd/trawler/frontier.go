package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/services/worker"
)

const frontierUsage = `usage: trawler frontier rebuild [--kafka BROKERS] [--redis ADDR] [--crawl fc|dc] [--stream npld|bypm] [--profile P] [--force]
       trawler frontier stats [--redis ADDR] [--crawl ..] [--stream ..] [--json]
       trawler frontier host HOST [--redis ADDR] [--crawl ..] [--stream ..] [--json]
       trawler frontier pause|resume [--host HOST] [--redis ADDR] [--crawl ..] [--stream ..]
       trawler frontier serve [--listen ADDR] [--admin-token-file F | --insecure] [--frontier NAME] [--redis ADDR] [--profile P]
rebuild restores an empty frontier from the Kafka journal (inscope minus crawled);
stats shows queued and in-flight URIs and hosts by queue state; host shows one host;
pause and resume stop and restart claims for the whole frontier or one host;
serve answers the URLFrontier API v2 (gRPC) over the frontier (see frontier serve --help).`

func runFrontier(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	verb, rest, err := sub(args, verbs()["frontier"]...)
	if err != nil {
		fmt.Fprintln(stderr, frontierUsage)
		return err
	}
	if verb == "serve" {
		return runFrontierServe(ctx, rest, stdout, stderr)
	}
	var host string
	if verb == "host" && (len(rest) == 0 || !isHelp(rest[0])) {
		if len(rest) == 0 || len(rest[0]) == 0 || rest[0][0] == '-' {
			fmt.Fprintln(stderr, frontierUsage)
			return fmt.Errorf("%w: frontier host needs a HOST", errUsage)
		}
		host, rest = rest[0], rest[1:]
	}
	fs := newFlagSet("frontier "+verb, stderr)
	o := frontierFlags{verb: verb}
	o.register(fs)
	if err := parse(fs, rest); err != nil {
		return err
	}
	if o.host != "" {
		host = o.host
	}
	env, err := o.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer env.rdb.Close()
	switch verb {
	case "rebuild":
		return o.rebuild(ctx, env, stdout)
	case "stats":
		st, err := env.f.Stats(ctx)
		if err != nil {
			return err
		}
		return o.print(stdout, st, formatStats)
	case "host":
		info, err := env.f.Host(ctx, host)
		if err != nil {
			return err
		}
		return o.print(stdout, info, formatHost)
	default:
		return o.pause(ctx, env, host, verb == "pause", stdout)
	}
}

// frontierFlags are the frontier tools' flags.
type frontierFlags struct {
	verb    string
	c       common
	kc      kafka.Config
	rc      redisconn.Config
	crawl   string
	stream  string
	force   bool
	asJSON  bool
	host    string
	timeout time.Duration
}

func (o *frontierFlags) register(fs *flag.FlagSet) {
	o.c.registerBase(fs, "info")
	o.rc.RegisterFlags(fs)
	fs.StringVar(&o.crawl, "crawl", "fc", "crawl: fc (frequent) or dc (domain)")
	fs.StringVar(&o.stream, "stream", "npld", "stream within the frequent crawl: npld or bypm (ignored for dc)")
	switch o.verb {
	case "rebuild":
		o.kc.RegisterFlags(fs)
		fs.BoolVar(&o.force, "force", false, "replay the journal onto a frontier that is not empty (nothing is queued twice)")
		fs.DurationVar(&o.timeout, "timeout", 0, "give up after this long (0: no limit)")
	case "stats", "host":
		fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	case "pause", "resume":
		fs.StringVar(&o.host, "host", "", "one host (host[:port]) instead of the whole frontier")
	}
}

// frontierEnv is an opened frontier.
type frontierEnv struct {
	log  *slog.Logger
	rdb  redis.UniversalClient
	f    *frontier.Frontier
	wcfg worker.Config
	c    common
}

func (o *frontierFlags) open(ctx context.Context, stderr io.Writer) (*frontierEnv, error) {
	wcfg := worker.Config{Crawl: o.crawl, Stream: o.stream, Threads: 1, DataDir: ".", Lease: time.Minute}
	if err := errorsJoin(wcfg.Validate(), o.rc.Validate()); err != nil {
		return nil, err
	}
	if o.verb == "rebuild" {
		if err := o.kc.Validate(); err != nil {
			return nil, err
		}
	}
	log, err := newLogger(o.c.logFormat, o.c.logLevel, stderr)
	if err != nil {
		return nil, err
	}
	p, err := loadProfile(o.c)
	if err != nil {
		return nil, err
	}
	// A frontier with several shards is spread over a Redis Cluster's
	// masters: -redis a:p,b:p,c:p (or -redis-cluster) opens a cluster.
	rdb, err := redisconn.OpenUniversal(ctx, o.rc)
	if err != nil {
		return nil, err
	}
	f, err := worker.NewFrontier(rdb, wcfg, p, log)
	if err == nil {
		// frontier.shards must be the frontier's. A look does not fix the
		// count of a frontier that has none recorded; a change does.
		check := f.RecordLayout
		if o.verb == "stats" || o.verb == "host" {
			check = f.CheckLayout
		}
		err = check(ctx)
	}
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	return &frontierEnv{log: log, rdb: rdb, f: f, wcfg: wcfg, c: o.c}, nil
}

func (o *frontierFlags) rebuild(ctx context.Context, env *frontierEnv, stdout io.Writer) error {
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	p, err := loadProfile(env.c)
	if err != nil {
		return err
	}
	if o.kc.ClientID == kafka.DefaultClientID {
		o.kc.ClientID = "trawler-frontier-rebuild"
	}
	j := worker.NewJournal(o.kc, env.wcfg, p.Crawl.Name, env.log)
	start := time.Now()
	rep, err := worker.RebuildFrontier(ctx, env.rdb, env.f, j, p, o.force)
	if errors.Is(err, frontier.ErrNotEmpty) {
		return fmt.Errorf("%w; rerun with --force to replay the journal onto it", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Rebuilt frontier %s from %s and %s in %s\n", env.f.Name(), env.wcfg.InScopeTopic(), env.wcfg.CrawledTopic(),
		time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "  finished URIs replayed: %d\n  admissions replayed:    %d\n  queued again:           %d\n  skipped (done/queued):  %d\n  malformed:              %d\n",
		rep.Finished, rep.Admitted, rep.Queued, rep.Skipped, rep.Malformed)
	return nil
}

func (o *frontierFlags) pause(ctx context.Context, env *frontierEnv, host string, pause bool, stdout io.Writer) error {
	what := "frontier " + env.f.Name()
	var err error
	switch {
	case host != "" && pause:
		err = env.f.PauseHost(ctx, host)
	case host != "":
		err = env.f.ResumeHost(ctx, host)
	case pause:
		err = env.f.Pause(ctx)
	default:
		err = env.f.Resume(ctx)
	}
	if err != nil {
		return err
	}
	if host != "" {
		what = "host " + host + " of " + what
	}
	state := "resumed"
	if pause {
		state = "paused"
	}
	fmt.Fprintf(stdout, "%s %s\n", what, state)
	return nil
}

func (o *frontierFlags) print(w io.Writer, v any, text func(io.Writer, any)) error {
	if o.asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(w, v)
	return nil
}

func formatStats(w io.Writer, v any) {
	st := v.(frontier.Stats)
	fmt.Fprintf(w, "queued URIs:     %d\nin flight URIs:  %d\nhosts:           %d known\n", st.Queued, st.InFlight, st.Hosts)
	fmt.Fprintf(w, "  ready:         %d\n  snoozed:       %d\n  in process:    %d\n  exhausted:     %d\n  paused:        %d\n",
		st.ReadyHosts, st.SnoozedHosts, st.BusyHosts, st.ExhaustedHosts, st.PausedHosts)
	fmt.Fprintf(w, "  backing off:   %d (after 429/503 or a challenge page; back-offs so far: %d for 429, %d for 503, %d for challenges)\n",
		st.BackingOffHosts, st.BackOffs429, st.BackOffs503, st.BackOffsChallenge)
	fmt.Fprintf(w, "waiting for retry: %d URIs at %d hosts", st.RetryURIs, st.RetryHosts)
	if !st.NextRetry.IsZero() {
		fmt.Fprintf(w, ", next due %s (in %s)", st.NextRetry.UTC().Format(time.RFC3339), time.Until(st.NextRetry).Round(time.Second))
	}
	fmt.Fprintln(w)
	if st.Paused {
		fmt.Fprintln(w, "the frontier is PAUSED")
	}
}

// backOffText says whether a host backs off after a 429 or 503: until
// when, and how many back-offs in a row (the next one without Retry-After
// waits about twice as long).
func backOffText(h frontier.HostInfo) string {
	switch {
	case h.BackOffs == 0:
		return "none"
	case h.BackOffUntil.After(time.Now()):
		return fmt.Sprintf("until %s after %d× %s in a row", h.BackOffUntil.UTC().Format(time.RFC3339Nano), h.BackOffs, h.BackOffReason)
	}
	return fmt.Sprintf("ended %s; %d× %s in a row, forgiven at the next other response", h.BackOffUntil.UTC().Format(time.RFC3339Nano),
		h.BackOffs, h.BackOffReason)
}

func formatHost(w io.Writer, v any) {
	h := v.(frontier.HostInfo)
	next := "now"
	if !h.NextFetch.IsZero() && h.NextFetch.After(time.Now()) {
		next = h.NextFetch.UTC().Format(time.RFC3339Nano)
	}
	fmt.Fprintf(w, "host:            %s\nqueued URIs:     %d\nin flight URIs:  %d\nparallelQueues:  %d\n", h.Host, h.Queued, h.InFlight, h.ParallelQueues)
	fmt.Fprintf(w, "paused:          %t\nready:           %t\nnext fetch:      %s\ncrawl-delay:     %s\n", h.Paused, h.Ready, next, h.CrawlDelay)
	fmt.Fprintf(w, "back-off:        %s\n", backOffText(h))
	fmt.Fprintf(w, "server (host:port): %d successes, %d bytes of them, %d responses, %d bytes in all\n",
		h.Server.FetchSuccesses, h.Server.SuccessBytes, h.Server.FetchResponses, h.Server.AllBytes)
	fmt.Fprintf(w, "host name:          %d successes, %d bytes of them, %d responses, %d bytes in all\n",
		h.HostName.FetchSuccesses, h.HostName.SuccessBytes, h.HostName.FetchResponses, h.HostName.AllBytes)
}
