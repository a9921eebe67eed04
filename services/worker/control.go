package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/control"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// LimitTerminated is what LimitReached says after an operator's
// terminate: the worker claims nothing more and its Run returns once
// in-flight URIs are finished, as at a crawl limit (standalone then
// writes its summary and reports, "Finished - Ended by operator").
const LimitTerminated = "terminated"

// errTerminated is the cause of a Run ended by a terminate command.
var errTerminated = errors.New("terminated by operator")

// pausedRecheck is how long a host waits when its next URI belongs to a
// paused target before the URI is claimed (and checked) again; it bounds
// how late a resume takes effect.
const pausedRecheck = time.Second

// controlLoop is the worker's consumer of <crawl>.control.
type controlLoop struct {
	w       *Worker
	app     *control.Applier
	from    int64 // first record time (ms) consumed
	applied *prometheus.CounterVec
}

// startControl opens the control consumer: a direct consumer of every
// partition (no group), so every worker sees every command, starting at
// the records written from now on. Commands written earlier are already
// in Redis (state commands are applied there once), so a new worker reads
// their effect from Redis rather than replaying the topic. stopRun ends
// the worker's Run (terminate). It also sets up the paused-target check
// of the claim path.
func (w *Worker) startControl(stopRun func()) (*controlLoop, error) {
	w.pausedSrc = control.NewPausedSources(w.rdb, w.front.Prefix(), time.Second)
	c := &controlLoop{w: w}
	app, err := control.New(control.Config{
		Redis: w.rdb, Crawl: w.cfg.Crawl, Stream: w.cfg.stream(), Worker: w.cfg.ID, Frontier: w.front,
		Sheets: w.chain.sheets, Exclusions: w.chain.excl, Logger: w.log.With("component", "control"),
		Seeds: w.controlSeeds, Delete: w.deleteQueued,
		Terminate: func(messages.Control) {
			w.limitMu.Lock()
			if w.limit == "" {
				w.limit = LimitTerminated
			}
			w.limitMu.Unlock()
			stopRun()
		},
	})
	if err != nil {
		return nil, fmt.Errorf("worker control: %w", err)
	}
	c.app = app
	// A little before now, so a command sent as the worker starts is not
	// missed; one seen twice changes nothing (idempotent by id).
	c.from = time.Now().Add(-time.Second).UnixMilli()
	c.applied = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trawler_control_commands_total",
		Help: "Control commands seen, by command and result (applied, skipped, invalid, failed).",
	}, []string{"command", "result"})
	if err := w.reg.Register(c.applied); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, fmt.Errorf("worker control metrics: %w", err)
		}
		c.applied = are.ExistingCollector.(*prometheus.CounterVec)
	}
	return c, nil
}

// run consumes commands until ctx ends.
func (c *controlLoop) run(ctx context.Context) {
	log := c.w.log.With("component", "control")
	cl, err := kafka.NewClient(c.w.kcfg, kgo.ConsumeTopics(control.Topic(c.w.cfg.Crawl)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AfterMilli(c.from)), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		log.Error("control consumer not started: commands are not seen by this worker", "err", err)
		return
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fs.EachError(func(topic string, p int32, err error) {
			log.Warn("control topic fetch", "topic", topic, "partition", p, "err", err)
		})
		fs.EachRecord(func(r *kgo.Record) { c.handle(ctx, r) })
	}
}

// handle applies one record. Bad input is logged with its position,
// counted and dead-lettered; it never stops the worker.
func (c *controlLoop) handle(ctx context.Context, r *kgo.Record) {
	pos := fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset)
	log := c.w.log.With("component", "control", "pos", pos)
	cmd, err := messages.DecodeControl(r.Value)
	if err != nil {
		log.Warn("control command rejected", "err", err)
		c.applied.WithLabelValues("", "invalid").Inc()
		c.deadLetter(ctx, r, err)
		return
	}
	if cmd.ID == "" {
		// Older producers send no id: the record's position is one, the
		// same on every worker.
		cmd.ID = fmt.Sprintf("%s-%d-%d", r.Topic, r.Partition, r.Offset)
	}
	log = log.With("id", cmd.ID, "command", cmd.Command, "by", cmd.Who())
	res, err := c.app.Apply(ctx, cmd)
	switch {
	case err != nil:
		log.Warn("control command failed", "err", err)
		c.applied.WithLabelValues(cmd.Command, "failed").Inc()
		c.deadLetter(ctx, r, err)
	case !res.Applied:
		log.Debug("control command skipped", "why", res.Skipped)
		c.applied.WithLabelValues(cmd.Command, "skipped").Inc()
	default:
		log.Info("control command applied", "result", res.Detail)
		c.applied.WithLabelValues(cmd.Command, "applied").Inc()
	}
}

// deadLetter sends a refused command to <crawl>.dlq with the reason. Only
// the worker that refused it first writes it there (all workers refuse
// the same bad record): the key's SET NX decides.
func (c *controlLoop) deadLetter(ctx context.Context, r *kgo.Record, cause error) {
	once := fmt.Sprintf("trawler:%s:control:dlq:%s-%d-%d", c.w.cfg.Crawl, r.Topic, r.Partition, r.Offset)
	if first, err := c.w.rdb.SetNX(ctx, once, c.w.cfg.ID, control.DefaultTTL).Result(); err == nil && !first {
		return
	}
	rec := kafka.DLQRecord(c.w.cfg.DLQTopic(), "trawler-control-"+c.w.cfg.ID, r, cause)
	if err := c.w.producer.ProduceSync(ctx, rec).FirstErr(); err != nil {
		c.w.log.Error("dead-letter control command", "err", err)
	}
}

// controlSeeds admits a seeds command's URLs as launch messages through
// the same path as the tocrawl topic (normalisation, sheets and seed
// scope, candidate chain, frontier, inscope journal). Each seed is its
// own source tag, as `--seed` seeds are.
func (w *Worker) controlSeeds(ctx context.Context, c messages.Control) (string, error) {
	b, _ := json.Marshal(c)
	rec := &kgo.Record{Topic: control.Topic(w.cfg.Crawl), Key: []byte(c.ID), Value: b}
	items := make([]kafka.Item[messages.Launch], 0, len(c.URLs))
	ts := time.Now().UTC().Format("2006-01-02T15:04:05.000")
	for _, u := range c.URLs {
		u = strings.TrimSpace(u)
		items = append(items, kafka.Item[messages.Launch]{Record: rec, Value: messages.Launch{
			URL: u, Method: "GET", IsSeed: true, ParentURL: u, Timestamp: ts,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: u}},
		}})
	}
	if err := w.ingest(ctx, items); err != nil {
		return "", fmt.Errorf("admit seeds: %w", err)
	}
	return fmt.Sprintf("launched %d seeds", len(items)), nil
}

// deleteQueued takes the queued URIs sel selects and finishes each with
// -6000 (Heritrix's S_DELETED_BY_USER), a crawled event and a crawl.log
// line, like any URI finished without a fetch. A URI whose event cannot
// be published goes back to its queue (it is not lost).
func (w *Worker) deleteQueued(ctx context.Context, sel frontier.Selector, c messages.Control) (int, error) {
	claims, err := w.front.TakeQueued(ctx, sel, w.cfg.Lease)
	n := 0
	for _, cl := range claims {
		eff := w.chain.settings(cl.Launch.URL)
		out := &outcome{status: frontier.StatusDeleted, mime: "unknown", start: time.Now(), notFetched: true}
		if c.Command == messages.CommandTerminate {
			out.notes = []string{control.AnnotationTerminate} // a host's or target's terminate
		}
		if w.publish(ctx, cl.Launch, 0, out) != proceed {
			if rerr := w.front.Release(context.WithoutCancel(ctx), []*frontier.Claim{cl}); rerr != nil {
				w.log.Error("return undeleted URI; its lease will expire", "url", cl.Launch.URL, "err", rerr)
			}
			continue
		}
		d := frontier.Decision{Status: frontier.StatusDeleted, Attempts: cl.Retries + 1}
		o := frontier.Outcome{Claim: cl, Status: frontier.StatusDeleted, NotFetched: true, Policy: w.chain.policy(eff), Decision: &d}
		if _, err := w.batch.Complete(ctx, []frontier.Outcome{o}); err != nil {
			w.log.Error("complete deleted URI; its lease will expire and it be deleted again", "url", cl.Launch.URL, "err", err)
			continue
		}
		w.metrics.observe(out)
		n++
	}
	if err != nil {
		return n, fmt.Errorf("delete queued URIs (by %s): %w", c.Who(), err)
	}
	return n, nil
}

// holdPaused defers the claims whose target (source tag) is paused: the
// URI goes back to the head of its queue uncharged and its host waits
// pausedRecheck, so a paused target is not fetched while other work goes
// on. It returns the claims to crawl. The paused set is read at most once
// a second (control.PausedSources), so the claim path pays nothing more
// while no target is paused.
//
// The frontier's claim already sets aside the URIs of targets paused
// through pkg/control (frontier.PauseSource), so they do not hold up their
// hosts' other targets; this check only covers a target in the paused set
// that the frontier does not know as paused (a pause recorded before the
// frontier kept its own), at the cost of a claim and a deferral per such
// host per second.
func (w *Worker) holdPaused(ctx context.Context, claims []*frontier.Claim) []*frontier.Claim {
	if w.pausedSrc == nil || len(claims) == 0 {
		return claims
	}
	paused, err := w.pausedSrc.Get(ctx)
	if err != nil {
		w.log.Warn("paused targets", "err", err)
	}
	if len(paused) == 0 {
		return claims
	}
	keep := claims[:0:0]
	var held []frontier.Outcome
	for _, c := range claims {
		if _, ok := paused[c.Launch.Source()]; !ok {
			keep = append(keep, c)
			continue
		}
		pol := frontier.Policy{Politeness: profile.Politeness{MinDelayMs: pausedRecheck.Milliseconds(),
			MaxDelayMs: pausedRecheck.Milliseconds()}, Frontier: w.chain.policy(w.chain.settings(c.Launch.URL)).Frontier}
		d := frontier.Decision{Retry: true, Defer: true, Status: frontier.StatusDeferred, Attempts: c.Retries + 1}
		held = append(held, frontier.Outcome{Claim: c, Status: frontier.StatusDeferred, Policy: pol, Decision: &d,
			CrawlDelayKnown: true})
	}
	if len(held) > 0 {
		if _, err := w.batch.Complete(ctx, held); err != nil {
			w.log.Warn("defer paused targets' URIs; their leases will expire", "uris", len(held), "err", err)
		}
	}
	return keep
}

// terminatedPoll is how often a worker held by a recorded terminate looks
// for the resume that lifts it.
const terminatedPoll = time.Second

// holdIfTerminated keeps a worker started after a terminate of its crawl
// or stream from claiming: it sets LimitTerminated (the dispatcher claims
// nothing, standalone ends its run as at any limit) and, until the
// terminate is lifted by a resume, stays up idle rather than exit, which
// under Kubernetes would only restart it. Once lifted, claims resume.
func (w *Worker) holdIfTerminated(ctx context.Context) error {
	id, ok, err := control.Terminated(ctx, w.rdb, w.front.Prefix())
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if !ok {
		return nil
	}
	w.limitMu.Lock()
	if w.limit == "" {
		w.limit = LimitTerminated
	}
	w.limitMu.Unlock()
	w.log.Warn("the crawl was terminated by an operator; claiming nothing until a resume", "command", id)
	go func() {
		t := time.NewTicker(terminatedPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, still, err := control.Terminated(ctx, w.rdb, w.front.Prefix()); err != nil || still {
				continue
			}
			w.limitMu.Lock()
			if w.limit == LimitTerminated {
				w.limit = ""
			}
			w.limitMu.Unlock()
			w.log.Info("terminate lifted; claiming again")
			w.nudge()
			return
		}
	}()
	return nil
}
