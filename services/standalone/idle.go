package standalone

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/services/cdxwriter"
	"github.com/trawler-crawl/trawler/services/launcher"
	"github.com/trawler-crawl/trawler/services/worker"
)

// launch sends the --seed URLs and the active targets of the --feed files
// to the tocrawl topic, as the launcher would. clock stamps them.
func launch(ctx context.Context, cfg Config, kc kafka.Config, wcfg worker.Config, clock launcher.Clock, log *slog.Logger) (int, *launcher.Summary, error) {
	cl, err := kafka.NewClient(kc)
	if err != nil {
		return 0, nil, err
	}
	defer cl.Close()
	now := clock.Now().UTC()
	if cfg.Relaunch {
		if now, err = launchSecond(ctx, now, clock); err != nil {
			return 0, nil, fmt.Errorf("relaunch: %w", err)
		}
	}
	n := 0
	for _, s := range cfg.Seeds {
		l := messages.Launch{
			URL: s, Method: "GET", IsSeed: true, ParentURL: s,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{
				Source: s, Heritable: []string{"source", "heritable"},
			}},
			Timestamp: now.Format("2006-01-02T15:04:05.000"),
		}
		if cfg.Relaunch {
			relaunch(&l, now)
		}
		b, err := messages.AppendLaunch(nil, l)
		if err != nil {
			return n, nil, fmt.Errorf("encode seed %s: %w", s, err)
		}
		key, err := hostkey.ForURL(s)
		if err != nil {
			return n, nil, fmt.Errorf("seed %q: %w", s, err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: wcfg.ToCrawlTopic(), Key: []byte(key), Value: b}).FirstErr(); err != nil {
			return n, nil, fmt.Errorf("launch seed %s: %w", s, err)
		}
		n++
	}
	if len(cfg.Feeds) == 0 {
		return n, nil, nil
	}
	svc, err := launcher.New(launcher.Config{Feeds: cfg.Feeds, Crawl: cfg.Crawl, Stream: cfg.Stream, TimeZone: cfg.TimeZone},
		launcher.Deps{Producer: producer{cl}, KeyFunc: hostkey.ForURL, Logger: log.With("role", "launcher"), Clock: clock})
	if err != nil {
		return n, nil, err
	}
	sum, err := svc.RunOnce(ctx, now)
	if err != nil {
		return n, &sum, err
	}
	return n + sum.Messages, &sum, nil
}

// launchSecond is the time a relaunch is stamped with: the first whole
// second after now, returned once clock has reached it.
//
// Launch timestamps have one-second resolution, and the seen filter takes
// a URI finished in a launch's own second for crawled in that launch (the
// frontier keeps finish records to the second and counts them from its
// end; admit.lua). Stamped with the second it was made in, a relaunch made
// just after a run ended took what that run finished earlier in the same
// second (its last and deepest URIs: 404s and pages reached only through
// the outlinks kept with unchanged pages) for crawled in the new launch,
// and skipped them. The next second is later than anything crawled before
// the launch. The launch is sent only once that second has begun: a URI
// finished in between would be older than the launch and crawled again,
// and the worker does not refetch robots.txt, nor so reach its sitemaps,
// for a launch stamped ahead of its clock (worker/relaunch.go).
func launchSecond(ctx context.Context, now time.Time, clock launcher.Clock) (time.Time, error) {
	at := now.Truncate(time.Second).Add(time.Second)
	for {
		d := at.Sub(clock.Now())
		if d <= 0 {
			return at, nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, fmt.Errorf("wait for the launch second %s: %w", at.Format(time.TimeOnly), ctx.Err())
		case <-t.C:
		}
	}
}

// relaunch makes a seed launch a new launch: forced, with a launch
// timestamp its outlinks inherit at any depth (refreshDepth), and the
// quotas of its source reset.
func relaunch(l *messages.Launch, now time.Time) {
	hd := &l.ParentURLMetadata.HeritableData
	depth := math.MaxInt32
	l.ForceFetch = true
	hd.LaunchTimestamp = messages.Timestamp14(now)
	hd.RefreshDepth = &depth
	hd.Heritable = append(hd.Heritable, "refreshDepth")
	hd.Annotations = append(hd.Annotations, "resetQuotas", "launchTimestamp:"+hd.LaunchTimestamp)
}

// systemClock stamps the launches of a run given no Deps.Clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// producer adapts a kgo client to the launcher's Producer.
type producer struct{ cl *kgo.Client }

func (p producer) Produce(ctx context.Context, topic, key string, value []byte) error {
	return p.cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(key), Value: value}).FirstErr()
}

// Reasons a run ends, for the summary; a crawl limit's name is another.
const (
	endedIdle        = "idle"
	endedInterrupted = ""
)

// waitEnd waits for the end of the run: the crawl is idle (nothing queued
// or in flight and every consumer caught up, seen twice in a row; only
// with untilIdle), or a crawl limit stopped the worker claiming and what it
// had in flight is finished and indexed, or ctx ends. It returns why.
func waitEnd(ctx context.Context, cl *cluster, w *worker.Worker, wcfg worker.Config, ccfg cdxwriter.Config, rule idleRule, started time.Time, log *slog.Logger) (string, error) {
	kc, err := kafka.NewClient(cl.kafka)
	if err != nil {
		return endedInterrupted, err
	}
	defer kc.Close()
	adm := kadm.NewClient(kc)
	t := time.NewTicker(idleCheckEvery)
	defer t.Stop()
	// The rate counts from the run's start, as the summary's time does.
	prog := newProgress(ctx, progressSource{totals: w.Totals, stats: w.Frontier().Stats, warcDir: wcfg.WARCDir()}, log, started)
	progress := time.NewTicker(prog.every())
	defer progress.Stop()
	// A last line as the run ends, so the final rate is on screen next to
	// the summary's totals; Redis is still up until Run returns.
	defer func() { prog.report(context.WithoutCancel(ctx), time.Now()) }()
	quiet := 0
	// check is one tick: it says why the run ends, or "" and false.
	check := func() (string, bool) {
		if limit := w.LimitReached(); limit != "" {
			return limit, drained(ctx, adm, w, ccfg)
		}
		if !rule.untilIdle {
			return "", false
		}
		idle, err := isIdle(ctx, adm, w, wcfg, ccfg, rule)
		if err != nil {
			log.Debug("idle check", "err", err)
		}
		if err != nil || !idle {
			quiet = 0
			return "", false
		}
		quiet++
		return endedIdle, quiet >= idleChecks
	}
	// The first check is made at once, so the idleChecks answers span
	// (idleChecks-1)×idleCheckEvery: an empty run ends 100 ms after its
	// roles start, not 150.
	if why, ended := check(); ended {
		return why, nil
	}
	for {
		select {
		case <-ctx.Done():
			return endedInterrupted, ctx.Err()
		case now := <-progress.C:
			prog.report(ctx, now)
		case <-t.C:
			if why, ended := check(); ended {
				return why, nil
			}
		}
	}
}

// An until-idle run ends after idleChecks idle answers in a row, asked
// every idleCheckEvery: a run's end waits that long, and a crawl that
// is about to find more work (a record on its way to a consumer) shows
// lag in between.
const (
	idleCheckEvery = 50 * time.Millisecond
	idleChecks     = 3
)

// drained reports that nothing is in flight and the cdxwriter has indexed
// (and, when it forwards, forwarded) every crawled event.
func drained(ctx context.Context, adm *kadm.Client, w *worker.Worker, ccfg cdxwriter.Config) bool {
	st, err := w.Frontier().Stats(ctx)
	if err != nil || st.InFlight > 0 {
		return false
	}
	groups := [][2]string{{ccfg.Group(), ccfg.Topic()}}
	if ccfg.ForwardURL != "" {
		groups = append(groups, [2]string{ccfg.ForwardGroup(), ccfg.Topic()})
	}
	for _, gt := range groups {
		if lag, err := kafka.GroupLag(ctx, adm, gt[0], gt[1]); err != nil || lag > 0 {
			return false
		}
	}
	return true
}

func isIdle(ctx context.Context, adm *kadm.Client, w *worker.Worker, wcfg worker.Config, ccfg cdxwriter.Config, rule idleRule) (bool, error) {
	st, err := w.Frontier().Stats(ctx)
	if err != nil || !frontierDone(st, rule.ignoreRetries) {
		return false, err
	}
	// The renderer commits a hand-off once its captures and outlinks are
	// published, so its lag covers renders in progress.
	groups := append([][2]string{{"trawler-worker-" + wcfg.Name(), wcfg.ToCrawlTopic()}, {ccfg.Group(), ccfg.Topic()}}, rule.groups...)
	for _, gt := range groups {
		lag, err := kafka.GroupLag(ctx, adm, gt[0], gt[1])
		if err != nil || lag > 0 {
			return false, err
		}
	}
	return true, nil
}

// idleRule is when a run ends by itself: with untilIdle once the crawl is
// idle; with ignoreRetries too when all that is left waits for a retry.
type idleRule struct {
	untilIdle, ignoreRetries bool
	// groups are more consumer groups and topics that must have caught up
	// (the renderer's, when one runs).
	groups [][2]string
}

// frontierDone reports a frontier with nothing left to do: nothing queued
// or in flight, or (ignoreRetries) nothing in flight and every queued URI
// waiting for a retry, which stays queued for a later run.
func frontierDone(st frontier.Stats, ignoreRetries bool) bool {
	if st.Queued == 0 && st.InFlight == 0 {
		return true
	}
	return ignoreRetries && st.OnlyRetriesLeft()
}

// progressAttrs are the frontier's fields of the progress log line: the queues, and
// the URIs that wait for a retry with when the first is due, so a crawl
// that only waits says so.
func progressAttrs(st frontier.Stats, now time.Time) []any {
	attrs := []any{"queued", st.Queued, "in_flight", st.InFlight, "ready_hosts", st.ReadyHosts,
		"snoozed_hosts", st.SnoozedHosts}
	if st.RetryURIs > 0 {
		attrs = append(attrs, "waiting_for_retry", st.RetryURIs, "retry_hosts", st.RetryHosts,
			"next_retry_in", st.NextRetry.Sub(now).Round(time.Second))
	}
	return attrs
}
