package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Producer writes one record to Kafka. Produce must return only once the
// record is acknowledged (or has failed), so that a run's summary is true.
// Implementations must be safe for use by one goroutine at a time.
type Producer interface {
	Produce(ctx context.Context, topic, key string, value []byte) error
}

// Clock tells the time; tests use a fixed one.
type Clock interface {
	Now() time.Time
}

// KeyFunc returns the Kafka key of a URL: the host key of ARCHITECTURE.md 3
// (hostkey.ForURL).
type KeyFunc func(url string) (string, error)

// Deps are what the launcher uses but does not own.
type Deps struct {
	// Producer sends launches; required unless DryRun.
	Producer Producer
	// KeyFunc keys each launch; required unless DryRun.
	KeyFunc KeyFunc
	// Logger; nil discards.
	Logger *slog.Logger
	// Clock stamps messages; nil means the system clock.
	Clock Clock
	// Out receives one JSON launch message per line in a dry run;
	// required for DryRun.
	Out io.Writer
	// HTTPClient fetches feeds given as URLs; nil means a client without
	// timeout, bounded by the run's context.
	HTTPClient *http.Client
}

// maxSummaryErrors bounds the bad lines a Summary keeps across all feeds.
const maxSummaryErrors = 100

// More reasons a target is not launched, besides those of Active.
const (
	// SkipNoKey: none of the target's seeds could be keyed.
	SkipNoKey = "no_key"
	// SkipInvalid: the target cannot be turned into launches.
	SkipInvalid = "invalid"
)

// Summary reports one run.
type Summary struct {
	Feeds      int // feeds read (a directory counts each file)
	FeedErrors int // feeds that could not be opened or read to the end
	Targets    int // valid targets read
	Launched   int // targets at least one launch was sent for
	Messages   int // launch messages sent (or printed)
	// Skipped counts targets not launched, by reason (Skip* constants).
	Skipped      map[string]int
	BadLines     int
	DroppedSeeds int // invalid seeds dropped from valid targets
	SeedErrors   int // seeds dropped because KeyFunc failed
	// Errors keeps the first bad lines over all feeds.
	Errors []LineError
}

// Service runs the launcher.
type Service struct {
	cfg    Config
	deps   Deps
	loc    *time.Location
	log    *slog.Logger
	topic  string
	render map[int64]bool // Config.RenderTargets as a set
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// New checks cfg and deps and returns a launcher.
func New(cfg Config, deps Deps) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
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
	render := make(map[int64]bool, len(cfg.RenderTargets))
	for _, id := range cfg.RenderTargets {
		render[id] = true
	}
	return &Service{cfg: cfg, deps: deps, loc: loc, log: deps.Logger, topic: cfg.Topic(), render: render}, nil
}

// abortError marks an error that ends the whole run (the producer or the
// dry-run output failed), as opposed to one feed being unreadable.
type abortError struct{ err error }

func (e abortError) Error() string { return e.err.Error() }
func (e abortError) Unwrap() error { return e.err }

// RunOnce reads every feed and launches every target active at at. A feed
// that cannot be opened or read is reported and the others are still
// launched; the error then joins every feed failure. The run stops at once
// when ctx ends or producing fails. The summary is valid in every case.
func (s *Service) RunOnce(ctx context.Context, at time.Time) (Summary, error) {
	sum := Summary{Skipped: map[string]int{}}
	var errs []error
	for _, location := range s.cfg.Feeds {
		files, err := ListFeeds(location)
		if err != nil {
			sum.FeedErrors++
			errs = append(errs, err)
			s.log.Error("feed unavailable", "feed", location, "err", err)
			continue
		}
		for _, f := range files {
			err := s.runFeed(ctx, f, at, &sum)
			if cerr := ctx.Err(); cerr != nil && err == nil {
				err = cerr
			}
			var abort abortError
			if err != nil && (errors.As(err, &abort) || ctx.Err() != nil) {
				return sum, fmt.Errorf("launch run: %w", err)
			}
			if err != nil {
				sum.FeedErrors++
				errs = append(errs, err)
				s.log.Error("feed failed", "feed", f, "err", err)
			}
		}
	}
	s.log.Info("launch run finished", "at", at, "feeds", sum.Feeds, "feed_errors", sum.FeedErrors,
		"targets", sum.Targets, "launched", sum.Launched, "messages", sum.Messages,
		"skipped", sum.Skipped, "bad_lines", sum.BadLines, "dropped_seeds", sum.DroppedSeeds,
		"dry_run", s.cfg.DryRun)
	if err := errors.Join(errs...); err != nil {
		return sum, fmt.Errorf("launch run: %w", err)
	}
	return sum, nil
}

func (s *Service) runFeed(ctx context.Context, location string, at time.Time, sum *Summary) error {
	rc, name, err := OpenFeed(ctx, location, s.deps.HTTPClient)
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	sum.Feeds++
	fr := FeedReader{Logger: s.log}
	st, err := fr.ReadFeed(ctx, rc, name, func(t Target) error {
		return s.launchTarget(ctx, t, at, sum)
	})
	sum.BadLines += st.BadLines
	sum.DroppedSeeds += st.DroppedSeeds
	for _, e := range st.Errors {
		if len(sum.Errors) < maxSummaryErrors {
			sum.Errors = append(sum.Errors, e)
		}
	}
	return err
}

// launchTarget sends the launches of one target if it is active. Only
// failures to send are returned, as abortErrors.
func (s *Service) launchTarget(ctx context.Context, t Target, at time.Time, sum *Summary) error {
	sum.Targets++
	if ok, reason := activity(t, at, s.loc); !ok {
		sum.Skipped[reason]++
		s.log.Debug("target not launched", "target", t.ID, "reason", reason)
		return nil
	}
	launches, err := BuildLaunches(t, at, LaunchOptions{
		RenderTargets: s.render,
		SentAt:        s.deps.Clock.Now(),
	})
	if err != nil {
		// ReadFeed only yields targets BuildLaunches accepts; this is a
		// guard, not an expected path.
		sum.Skipped[SkipInvalid]++
		s.log.Warn("target not launched", "target", t.ID, "source", t.Source, "line", t.Line, "err", err)
		return nil
	}
	sent := 0
	for _, l := range launches {
		ok, err := s.send(ctx, t, l)
		if err != nil {
			return abortError{err}
		}
		if ok {
			sent++
		} else {
			sum.SeedErrors++
		}
	}
	sum.Messages += sent
	if sent == 0 {
		sum.Skipped[SkipNoKey]++
		return nil
	}
	sum.Launched++
	s.log.Info("target launched", "target", t.ID, "title", t.Title, "seeds", sent, "topic", s.topic,
		"dry_run", s.cfg.DryRun)
	return nil
}

// send produces (or prints) one launch. It reports false without error
// when the URL cannot be keyed, which drops that seed only.
func (s *Service) send(ctx context.Context, t Target, l messages.Launch) (bool, error) {
	value, err := encodeLaunch(l)
	if err != nil {
		return false, fmt.Errorf("target %d: %w", t.ID, err)
	}
	var key string
	if s.deps.KeyFunc != nil {
		if key, err = s.deps.KeyFunc(l.URL); err != nil {
			s.log.Warn("seed not launched: no host key", "target", t.ID, "url", l.URL, "err", err)
			return false, nil
		}
	}
	if s.cfg.DryRun {
		if _, err := s.deps.Out.Write(value); err != nil {
			return false, fmt.Errorf("dry run: write launch of %s: %w", l.URL, err)
		}
		return true, nil
	}
	if err := s.deps.Producer.Produce(ctx, s.topic, key, bytes.TrimSuffix(value, []byte("\n"))); err != nil {
		return false, fmt.Errorf("produce launch of %s to %s: %w", l.URL, s.topic, err)
	}
	return true, nil
}

// encodeLaunch returns the message as one JSON line. URLs keep their & and
// < > as is: HTML escaping would only make the messages harder to read.
func encodeLaunch(l messages.Launch) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, fmt.Errorf("encode launch of %s: %w", l.URL, err)
	}
	return buf.Bytes(), nil
}
