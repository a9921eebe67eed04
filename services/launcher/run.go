package launcher

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// run is the state of one RunOnce: the summary, the due targets not yet
// sent, and progress pacing.
type run struct {
	s        *Service
	hour     time.Time
	sum      Summary
	due      []Target
	dueSeeds int

	progressTargets int
	progressAt      time.Time
}

// pending is one launch waiting in a batch.
type pending struct {
	rec    Record
	url    string
	ledger string // Ledger key
	tally  *tally
}

// tally follows one target's seeds through batches, so the target is
// counted once, as launched or skipped, when its last seed is settled.
type tally struct {
	id       int64
	title    string
	left     int // seeds not yet settled
	sent     int
	repeated int
}

func (s *Service) newRun(hour time.Time) *run {
	return &run{s: s, hour: hour.UTC(), sum: Summary{Hour: hour.UTC(), Skipped: map[string]int{}},
		progressAt: s.deps.Clock.Now()}
}

// target decides one target and queues it if due. Only failures to send
// or record are returned, as abortErrors.
func (r *run) target(ctx context.Context, t Target) error {
	s := r.s
	r.sum.Targets++
	defer r.progress()
	if ok, reason := decide(t, r.hour.In(s.loc), s.loc, s.cfg.Hourly); !ok {
		r.sum.Skipped[reason]++
		return nil
	}
	r.sum.Due++
	r.due = append(r.due, t)
	r.dueSeeds += len(t.Seeds)
	if r.dueSeeds >= s.cfg.BatchSize {
		return r.flush(ctx)
	}
	return nil
}

// prepared is one due target turned into launches ready to send.
type prepared struct {
	launches []pending
	keyErrs  int   // seeds dropped because they could not be keyed
	err      error // the target cannot be launched at all
}

// prepareAll builds, encodes and keys the launches of targets on all CPUs:
// for a large hour this is most of the work.
func (r *run) prepareAll(targets []Target) []prepared {
	out := make([]prepared, len(targets))
	sent := r.s.deps.Clock.Now()
	workers := min(runtime.GOMAXPROCS(0), max(1, len(targets)/32))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(targets); i += workers {
				out[i] = r.prepare(targets[i], sent)
			}
		}()
	}
	wg.Wait()
	return out
}

// prepare turns one target into launches. A seed that cannot be keyed is
// dropped alone. It only reads r, so targets are prepared in parallel.
func (r *run) prepare(t Target, sent time.Time) prepared {
	s := r.s
	launches, err := BuildLaunches(t, r.hour, LaunchOptions{RenderTargets: s.render, RefreshDepth: s.cfg.RefreshDepth, SentAt: sent})
	if err != nil {
		return prepared{err: err}
	}
	p := prepared{launches: make([]pending, 0, len(launches))}
	for _, l := range launches {
		value, err := encodeLaunch(l)
		if err != nil {
			return prepared{err: fmt.Errorf("target %d: %w", t.ID, err)}
		}
		var key string
		if s.deps.KeyFunc != nil {
			if key, err = s.deps.KeyFunc(l.URL); err != nil {
				s.log.Warn("seed not launched: no host key", "target", t.ID, "url", l.URL, "err", err)
				p.keyErrs++
				continue
			}
		}
		p.launches = append(p.launches, pending{
			rec:    Record{Topic: s.topic, Key: key, Value: value[:len(value)-1]}, // without the newline
			url:    l.URL,
			ledger: LaunchKey(s.topic, r.hour, t.ID, l.URL),
		})
	}
	return p
}

// collect counts the prepared targets and returns their launches, each
// tied to its target's tally.
func (r *run) collect(targets []Target, ps []prepared) []pending {
	var batch []pending
	for i, p := range ps {
		t := targets[i]
		if p.err != nil {
			// ReadFeed only yields targets BuildLaunches accepts; this is
			// a guard, not an expected path.
			r.sum.Skipped[SkipInvalid]++
			r.s.log.Warn("target not launched", "target", t.ID, "source", t.Source, "line", t.Line, "err", p.err)
			continue
		}
		r.sum.SeedErrors += p.keyErrs
		if len(p.launches) == 0 {
			r.sum.Skipped[SkipNoKey]++
			continue
		}
		tl := &tally{id: t.ID, title: t.Title, left: len(p.launches)}
		for _, l := range p.launches {
			l.tally = tl
			batch = append(batch, l)
		}
	}
	return batch
}

// flush sends the due targets queued so far: prepares their launches,
// claims them in the ledger, produces what it got, confirms what the broker
// acknowledged and releases the rest.
func (r *run) flush(ctx context.Context) error {
	targets := r.due
	r.due, r.dueSeeds = r.due[:0], 0
	batch := r.collect(targets, r.prepareAll(targets))
	if len(batch) == 0 {
		return nil
	}
	if r.s.cfg.DryRun {
		return r.print(batch)
	}
	owned, err := r.claim(ctx, batch)
	if err != nil {
		return abortError{err}
	}
	recs := make([]Record, len(owned))
	for i, p := range owned {
		recs[i] = p.rec
	}
	errs := produceAll(ctx, r.s.deps.Producer, recs)
	var sent, failed []string
	var firstErr error
	for i, p := range owned {
		if errs[i] != nil {
			failed = append(failed, p.ledger)
			if firstErr == nil {
				firstErr = fmt.Errorf("produce launch of %s to %s: %w", p.url, r.s.topic, errs[i])
			}
			continue
		}
		sent = append(sent, p.ledger)
		r.settle(p, true)
	}
	if err := r.record(ctx, sent, failed); err != nil {
		return abortError{err}
	}
	if firstErr != nil {
		return abortError{firstErr}
	}
	return nil
}

// claim returns the launches of batch this run may send; the others were
// launched this hour already and are settled as repeated.
func (r *run) claim(ctx context.Context, batch []pending) ([]pending, error) {
	if r.s.deps.Ledger == nil {
		return batch, nil
	}
	keys := make([]string, len(batch))
	for i, p := range batch {
		keys[i] = p.ledger
	}
	got, err := r.s.deps.Ledger.Claim(ctx, keys)
	if err != nil {
		return nil, err
	}
	owned := batch[:0:0]
	for i, p := range batch {
		if got[i] {
			owned = append(owned, p)
			continue
		}
		r.sum.Repeated++
		r.settle(p, false)
	}
	return owned, nil
}

// record confirms the sent launches and releases the failed ones. The
// release uses a fresh context: a cancelled run must still give its claims
// back.
func (r *run) record(ctx context.Context, sent, failed []string) error {
	l := r.s.deps.Ledger
	if l == nil {
		return nil
	}
	if len(failed) > 0 {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := l.Release(rctx, failed); err != nil {
			r.s.log.Error("launch claims not released; they expire with the claim TTL", "count", len(failed), "err", err)
		}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return l.Confirm(cctx, sent)
}

// print writes a dry run's batch to Deps.Out.
func (r *run) print(batch []pending) error {
	for _, p := range batch {
		line := append(p.rec.Value[:len(p.rec.Value):len(p.rec.Value)], '\n')
		if _, err := r.s.deps.Out.Write(line); err != nil {
			return abortError{fmt.Errorf("dry run: write launch of %s: %w", p.url, err)}
		}
		r.settle(p, true)
	}
	return nil
}

// settle counts one seed as sent or repeated and, once a target's last seed
// is settled, the target as launched or already launched.
func (r *run) settle(p pending, sent bool) {
	tl := p.tally
	tl.left--
	if sent {
		tl.sent++
		r.sum.Messages++
	} else {
		tl.repeated++
	}
	if tl.left > 0 {
		return
	}
	if tl.sent == 0 {
		r.sum.Skipped[SkipAlreadyLaunched]++
		return
	}
	r.sum.Launched++
	r.s.log.Debug("target launched", "target", tl.id, "title", tl.title, "seeds", tl.sent, "repeated", tl.repeated,
		"topic", r.s.topic, "dry_run", r.s.cfg.DryRun)
}

// progress logs a progress line every ProgressEvery targets or
// ProgressInterval, whichever comes first.
func (r *run) progress() {
	cfg := r.s.cfg
	now := r.s.deps.Clock.Now()
	if r.sum.Targets-r.progressTargets < cfg.ProgressEvery && now.Sub(r.progressAt) < cfg.ProgressInterval {
		return
	}
	r.progressTargets, r.progressAt = r.sum.Targets, now
	r.s.log.Info("launch progress", "hour", r.hour, "targets", r.sum.Targets, "due", r.sum.Due,
		"messages", r.sum.Messages, "repeated", r.sum.Repeated)
}

// encodeLaunch returns the message as one JSON line, ending in a newline.
// Launch.MarshalJSON writes URLs' & and < > as they are (HTML escaping
// would only make the messages harder to read); calling it directly spares
// encoding/json a second pass over its output.
func encodeLaunch(l messages.Launch) ([]byte, error) {
	b, err := l.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode launch of %s: %w", l.URL, err)
	}
	return append(b, '\n'), nil
}
