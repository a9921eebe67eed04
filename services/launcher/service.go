package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Clock tells the time; tests use a fixed one.
type Clock interface {
	Now() time.Time
}

// KeyFunc returns the Kafka key of a URL: the host key of ARCHITECTURE.md 3
// (hostkey.ForURL).
type KeyFunc func(url string) (string, error)

// WaitFunc blocks until the clock reads until or ctx ends, and returns
// ctx's error in the latter case. Serve waits through it; tests replace it
// to step a fake clock.
type WaitFunc func(ctx context.Context, until time.Time) error

// Deps are what the launcher uses but does not own.
type Deps struct {
	// Producer sends launches; required unless DryRun.
	Producer Producer
	// KeyFunc keys each launch; required unless DryRun.
	KeyFunc KeyFunc
	// Ledger records what was launched, so a re-run sends nothing twice;
	// required for Serve. Nil keeps no record: every run sends all it
	// finds (single-machine mode, where a run happens once).
	Ledger Ledger
	// Logger; nil discards.
	Logger *slog.Logger
	// Registerer receives the launcher's metrics; nil keeps them private.
	Registerer prometheus.Registerer
	// Clock stamps messages and paces progress and Serve; nil means the
	// system clock.
	Clock Clock
	// Wait is how Serve sleeps; nil means a real timer.
	Wait WaitFunc
	// Out receives one JSON launch message per line in a dry run;
	// required for DryRun.
	Out io.Writer
	// HTTPClient fetches feeds given as URLs; nil means a client without
	// timeout, bounded by the run's context.
	HTTPClient *http.Client
}

// maxSummaryErrors bounds the bad lines a Summary keeps across all feeds.
const maxSummaryErrors = 100

// More reasons a target is not launched, besides those of Due.
const (
	// SkipAlreadyLaunched: every seed of the target was already launched
	// for this hour (by an earlier or a concurrent run).
	SkipAlreadyLaunched = "already_launched"
	// SkipNoKey: none of the target's seeds could be keyed.
	SkipNoKey = "no_key"
	// SkipInvalid: the target cannot be turned into launches.
	SkipInvalid = "invalid"
)

// Summary reports one run.
type Summary struct {
	Hour       time.Time // the hour launched (UTC), launchTimestamp of every message
	Feeds      int       // feeds read (a directory counts each file)
	FeedErrors int       // feeds that could not be opened or read to the end
	Targets    int       // valid targets read
	Due        int       // targets due (hourly) or active (otherwise)
	Launched   int       // targets at least one launch was sent for
	Messages   int       // launch messages sent (or printed)
	// Skipped counts targets not launched, by reason (Skip* constants).
	Skipped      map[string]int
	BadLines     int
	DroppedSeeds int // invalid seeds dropped from valid targets
	SeedErrors   int // seeds dropped because KeyFunc failed
	Repeated     int // seeds not sent because already launched this hour
	// Errors keeps the first bad lines over all feeds.
	Errors   []LineError
	Duration time.Duration
	Ended    time.Time
}

// String is the one-line summary the launcher command prints.
func (s Summary) String() string {
	reasons := make([]string, 0, len(s.Skipped))
	for r, n := range s.Skipped {
		reasons = append(reasons, fmt.Sprintf("%s=%d", r, n))
	}
	slices.Sort(reasons)
	return fmt.Sprintf("hour %s: %d targets read, %d due, %d launched (%d messages), skipped {%s}, %d bad lines, %d feed errors",
		s.Hour.UTC().Format(time.RFC3339), s.Targets, s.Due, s.Launched, s.Messages, strings.Join(reasons, " "),
		s.BadLines, s.FeedErrors)
}

// Service runs the launcher.
type Service struct {
	cfg     Config
	deps    Deps
	loc     *time.Location
	log     *slog.Logger
	topic   string
	render  map[int64]bool // Config.RenderTargets as a set
	metrics *metrics
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// New checks cfg and deps and returns a launcher.
func New(cfg Config, deps Deps) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	loc, err := time.LoadLocation(cfg.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("launcher config: time zone %q: %w", cfg.TimeZone, err)
	}
	switch {
	case cfg.DryRun && deps.Out == nil:
		return nil, errors.New("launcher: dry run needs an output writer")
	case !cfg.DryRun && deps.Producer == nil:
		return nil, errors.New("launcher: no producer")
	case !cfg.DryRun && deps.KeyFunc == nil:
		return nil, errors.New("launcher: no key function")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Clock == nil {
		deps.Clock = systemClock{}
	}
	if deps.Wait == nil {
		deps.Wait = timerWait
	}
	m, err := newMetrics(deps.Registerer)
	if err != nil {
		return nil, err
	}
	render := make(map[int64]bool, len(cfg.RenderTargets))
	for _, id := range cfg.RenderTargets {
		render[id] = true
	}
	return &Service{cfg: cfg, deps: deps, loc: loc, log: deps.Logger, topic: cfg.Topic(), render: render, metrics: m}, nil
}

// Topic is the topic launches go to.
func (s *Service) Topic() string { return s.topic }

// abortError marks an error that ends the whole run (the producer, the
// ledger or the dry-run output failed), as opposed to one feed being
// unreadable.
type abortError struct{ err error }

func (e abortError) Error() string { return e.err.Error() }
func (e abortError) Unwrap() error { return e.err }

// RunOnce reads every feed and launches every target due in the hour
// holding at (Config.Hourly), or active then. A feed that cannot be opened
// or read is reported and the others are still launched; the error then
// joins every feed failure. The run stops at once when ctx ends or
// producing or recording fails. The summary is valid in every case.
func (s *Service) RunOnce(ctx context.Context, at time.Time) (Summary, error) {
	started := s.deps.Clock.Now()
	r := s.newRun(HourOf(at, s.loc))
	err := s.runFeeds(ctx, r)
	// The last batch is sent unless the run was stopped: a feed that
	// failed must not hold back the others' launches.
	var abort abortError
	if ctx.Err() == nil && !errors.As(err, &abort) {
		if ferr := r.flush(ctx); ferr != nil {
			err = errors.Join(fmt.Errorf("launch run: %w", ferr), err)
		}
	}
	r.sum.Ended = s.deps.Clock.Now()
	r.sum.Duration = r.sum.Ended.Sub(started)
	s.metrics.record(r.sum, err)
	s.log.Info("launch run finished", "hour", r.sum.Hour, "feeds", r.sum.Feeds, "feed_errors", r.sum.FeedErrors,
		"targets", r.sum.Targets, "due", r.sum.Due, "launched", r.sum.Launched, "messages", r.sum.Messages,
		"skipped", r.sum.Skipped, "bad_lines", r.sum.BadLines, "dropped_seeds", r.sum.DroppedSeeds,
		"hourly", s.cfg.Hourly, "dry_run", s.cfg.DryRun, "duration", r.sum.Duration, "err", err)
	return r.sum, err
}

func (s *Service) runFeeds(ctx context.Context, r *run) error {
	var errs []error
	for _, location := range s.cfg.Feeds {
		files, err := ListFeeds(location)
		if err != nil {
			r.sum.FeedErrors++
			errs = append(errs, err)
			s.log.Error("feed unavailable", "feed", location, "err", err)
			continue
		}
		for _, f := range files {
			err := s.runFeed(ctx, f, r)
			if cerr := ctx.Err(); cerr != nil && err == nil {
				err = cerr
			}
			var abort abortError
			if err != nil && (errors.As(err, &abort) || ctx.Err() != nil) {
				return fmt.Errorf("launch run: %w", err)
			}
			if err != nil {
				r.sum.FeedErrors++
				errs = append(errs, err)
				s.log.Error("feed failed", "feed", f, "err", err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("launch run: %w", err)
	}
	return nil
}

func (s *Service) runFeed(ctx context.Context, location string, r *run) error {
	rc, name, err := OpenFeed(ctx, location, s.deps.HTTPClient)
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	r.sum.Feeds++
	fr := FeedReader{Logger: s.log}
	st, err := fr.ReadFeed(ctx, rc, name, func(t Target) error {
		return r.target(ctx, t)
	})
	r.sum.BadLines += st.BadLines
	r.sum.DroppedSeeds += st.DroppedSeeds
	for _, e := range st.Errors {
		if len(r.sum.Errors) < maxSummaryErrors {
			r.sum.Errors = append(r.sum.Errors, e)
		}
	}
	return err
}

// timerWait is the real WaitFunc.
func timerWait(ctx context.Context, until time.Time) error {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
