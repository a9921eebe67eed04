package launcher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// BulkSummary reports one bulk load.
type BulkSummary struct {
	Job      string
	Topic    string
	Lines    int // input lines read
	Resumed  int // lines skipped because an earlier run sent them
	Seeds    int // seeds sent (acknowledged by the broker)
	Excluded int // crawl-feed targets not sent because they are NEVERCRAWL
	Prefixes int // SURT prefixes written to the scope file
	// BadLines counts lines skipped as bad; Errors keeps the first of them.
	BadLines     int
	Errors       []LineError
	DroppedSeeds int // invalid seeds dropped from otherwise valid targets
	Checkpoint   Checkpoint
	Duration     time.Duration
}

// String is the one-line summary the launcher command prints.
func (s BulkSummary) String() string {
	rate := 0.0
	if s.Duration > 0 {
		rate = float64(s.Seeds) / s.Duration.Seconds()
	}
	return fmt.Sprintf("bulk %s into %s: %d lines, %d seeds sent (%.0f/s), %d lines resumed past, %d NEVERCRAWL targets excluded, %d bad lines, %d scope prefixes, checkpoint line %d",
		s.Job, s.Topic, s.Lines, s.Seeds, rate, s.Resumed, s.Excluded, s.BadLines, s.Prefixes, s.Checkpoint.Line)
}

// Bulk streams cfg.Input into the topic as seed launch messages keyed by
// host key, and writes the matching SURT scope file. It is resumable: the
// checkpoint (the last input line whose launches the broker acknowledged,
// with a hash of that line) is saved every CheckpointEvery lines after a
// Flush, so a restarted load skips every line already sent and a finished
// load run again sends only lines appended since. The scope file is
// rewritten whole on every run (lines before the checkpoint included), so
// it always matches the input. The summary is valid in every case.
func Bulk(ctx context.Context, cfg BulkConfig, deps BulkDeps) (BulkSummary, error) {
	b, err := newBulkRun(cfg, deps)
	if err != nil {
		return BulkSummary{}, err
	}
	// Records are produced under a context that outlives ctx by
	// drainGrace: when the load is stopped (SIGTERM) what is already
	// buffered is still delivered, so the checkpoint saved on the way out
	// covers it and the next run resumes exactly there. A broker that
	// does not answer within the grace fails them instead.
	pctx, pcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer pcancel()
	done := make(chan struct{})
	defer close(done)
	go cancelAfterGrace(ctx, done, pcancel)
	b.pctx = pctx
	started := b.deps.Clock.Now()
	err = b.run(ctx)
	b.sum.Duration = b.deps.Clock.Now().Sub(started)
	b.log.Info("bulk load finished", "job", b.sum.Job, "topic", b.sum.Topic, "lines", b.sum.Lines, "seeds", b.sum.Seeds,
		"resumed", b.sum.Resumed, "excluded", b.sum.Excluded, "bad_lines", b.sum.BadLines,
		"checkpoint", b.sum.Checkpoint.Line, "duration", b.sum.Duration, "err", err)
	return b.sum, err
}

// drainGrace is how long a stopped bulk load waits for the launches it
// already buffered.
const drainGrace = 30 * time.Second

// cancelAfterGrace calls cancel drainGrace after ctx ends, unless done is
// closed first.
func cancelAfterGrace(ctx context.Context, done <-chan struct{}, cancel context.CancelFunc) {
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	t := time.NewTimer(drainGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		cancel()
	}
}

// bulkRun is the state of one bulk load.
type bulkRun struct {
	pctx    context.Context // what records are produced under
	cfg     BulkConfig
	deps    BulkDeps
	log     *slog.Logger
	metrics *bulkMetrics
	sum     BulkSummary
	resume  Checkpoint
	scope   *surtFile
	now     time.Time // message timestamp, fixed for the load

	since      int    // lines sent since the last checkpoint
	queued     int    // seeds produced since the last checkpoint
	doneLine   int    // last line fully handled
	doneHash   string // its lineHash
	progressAt time.Time
}

func newBulkRun(cfg BulkConfig, deps BulkDeps) (*bulkRun, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case deps.Producer == nil:
		return nil, errors.New("bulk load: no producer")
	case deps.KeyFunc == nil:
		return nil, errors.New("bulk load: no key function")
	case deps.Checkpoints == nil:
		return nil, errors.New("bulk load: no checkpoint store")
	}
	if cfg.CheckpointEvery == 0 {
		cfg.CheckpointEvery = DefaultCheckpointEvery
	}
	if cfg.ProgressInterval == 0 {
		cfg.ProgressInterval = DefaultBulkProgress
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Clock == nil {
		deps.Clock = systemClock{}
	}
	m, err := newBulkMetrics(deps.Registerer)
	if err != nil {
		return nil, err
	}
	now := deps.Clock.Now()
	return &bulkRun{cfg: cfg, deps: deps, log: deps.Logger, metrics: m, now: now, progressAt: now,
		sum: BulkSummary{Job: cfg.JobName(), Topic: cfg.Topic()}}, nil
}

func (b *bulkRun) run(ctx context.Context) error {
	if err := b.loadCheckpoint(ctx); err != nil {
		return err
	}
	rc, name, err := OpenFeed(ctx, b.cfg.Input, b.deps.HTTPClient)
	if err != nil {
		return fmt.Errorf("bulk load: %w", err)
	}
	defer func() { _ = rc.Close() }()
	if b.cfg.ScopeFile != "" {
		b.scope, err = createSURTFile(b.cfg.ScopeFile,
			fmt.Sprintf("SURT prefixes of the seeds of bulk load %s (input %s, topic %s)", b.sum.Job, name, b.sum.Topic),
			fmt.Sprintf("written by trawler launcher bulk at %s; one +prefix per line", b.now.UTC().Format(time.RFC3339)))
		if err != nil {
			return err
		}
		defer func() {
			if b.scope != nil {
				b.scope.Abort()
			}
		}()
	}
	if err := b.readInput(ctx, rc, name); err != nil {
		b.checkpointAfterError()
		return err
	}
	if err := b.checkpoint(ctx); err != nil {
		return err
	}
	if b.scope != nil {
		b.sum.Prefixes = b.scope.n
		err, b.scope = b.scope.Commit(), nil
		return err
	}
	return nil
}

func (b *bulkRun) loadCheckpoint(ctx context.Context) error {
	job := b.sum.Job
	if b.cfg.Restart {
		if err := b.deps.Checkpoints.Clear(ctx, job); err != nil {
			return err
		}
	}
	cp, found, err := b.deps.Checkpoints.Load(ctx, job)
	if err != nil {
		return err
	}
	if found {
		b.resume, b.sum.Checkpoint = cp, cp
		b.log.Info("bulk load resuming", "job", job, "after_line", cp.Line)
	}
	return nil
}

// checkpoint waits for every launch so far to be acknowledged, then saves
// the current line as the checkpoint.
func (b *bulkRun) checkpoint(ctx context.Context) error {
	if b.since == 0 {
		return nil
	}
	if err := b.deps.Producer.Flush(ctx); err != nil {
		return fmt.Errorf("bulk load: sending lines %d to %d: %w", b.sum.Checkpoint.Line+1, b.doneLine, err)
	}
	cp := Checkpoint{Line: b.doneLine, Hash: b.doneHash}
	if err := b.deps.Checkpoints.Save(ctx, b.sum.Job, cp); err != nil {
		return err
	}
	b.sum.Seeds += b.queued
	b.metrics.seeds.Add(float64(b.queued))
	b.metrics.checkpoint.Set(float64(cp.Line))
	b.sum.Checkpoint, b.since, b.queued = cp, 0, 0
	return nil
}

// checkpointAfterError saves what was acknowledged before a load stopped
// on an error or a cancellation, so the next run resumes there. It uses the
// producing context, bounded: the run's own may be the thing that ended.
func (b *bulkRun) checkpointAfterError() {
	ctx, cancel := context.WithTimeout(b.pctx, drainGrace)
	defer cancel()
	if err := b.checkpoint(ctx); err != nil {
		b.log.Warn("bulk load: no checkpoint after the error; the next run resends from the last one",
			"job", b.sum.Job, "checkpoint", b.sum.Checkpoint.Line, "err", err)
	}
}

func (b *bulkRun) bad(e LineError) {
	b.sum.BadLines++
	b.metrics.badLines.Inc()
	if len(b.sum.Errors) < DefaultMaxErrors {
		b.sum.Errors = append(b.sum.Errors, e)
		b.log.Warn("bad bulk line skipped", "source", e.Source, "line", e.Line, "reason", e.Reason)
	}
}

// progress logs a progress line every ProgressInterval.
func (b *bulkRun) progress() {
	now := b.deps.Clock.Now()
	if now.Sub(b.progressAt) < b.cfg.ProgressInterval {
		return
	}
	elapsed := now.Sub(b.now).Seconds()
	sent := b.sum.Seeds + b.queued
	b.progressAt = now
	b.log.Info("bulk load progress", "job", b.sum.Job, "lines", b.sum.Lines, "seeds_produced", sent,
		"checkpoint", b.sum.Checkpoint.Line, "seeds_per_second", int(float64(sent)/max(elapsed, 1e-9)))
}

// lineHash identifies a line's content in a checkpoint.
func lineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:8])
}
