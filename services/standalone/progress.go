package standalone

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/trawler-crawl/trawler/pkg/frontier"
)

// Progress intervals: a person watching a terminal wants to see the crawl
// move; a log collector wants a line it can chart without drowning.
const (
	terminalProgressEvery = 3 * time.Second
	logProgressEvery      = 10 * time.Second
)

// progressSource is what a progress line reads: the crawl's totals and
// frontier (the worker's, from Redis) and the WARC directory.
type progressSource struct {
	totals  func(context.Context) (frontier.Totals, error)
	stats   func(context.Context) (frontier.Stats, error)
	warcDir string
}

// progress reports a standalone run's progress: a line for a person when
// out is set (stderr is a terminal), a structured log line otherwise.
//
// Its rate is URIs finished this run over the time since the run began,
// the same measure as the final summary's URIs over its elapsed time, so
// the last line and the summary agree; earlier runs on the data directory
// are counted in the totals but not in the rate.
type progress struct {
	src   progressSource
	out   io.Writer // nil: log
	log   *slog.Logger
	start time.Time
	base  frontier.Totals // totals when the run began
}

// newProgress starts a progress report at start. It writes lines to
// stderr when stderr is a terminal (a character device: a terminal, or
// /dev/null, where the lines do no harm) and logs otherwise.
func newProgress(ctx context.Context, src progressSource, log *slog.Logger, start time.Time) *progress {
	var out io.Writer
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		out = os.Stderr
	}
	return newProgressTo(ctx, src, out, log, start)
}

func newProgressTo(ctx context.Context, src progressSource, out io.Writer, log *slog.Logger, start time.Time) *progress {
	p := &progress{src: src, out: out, log: log, start: start}
	// Without a baseline the rate would count earlier runs' URIs; a
	// failed read leaves it zero, which only overstates the rate.
	p.base, _ = src.totals(ctx)
	return p
}

// every is how often report should be called.
func (p *progress) every() time.Duration {
	if p.out != nil {
		return terminalProgressEvery
	}
	return logProgressEvery
}

// progressLine is one report's numbers.
type progressLine struct {
	elapsed   time.Duration
	uris      int64 // crawl-wide, as the summary counts them
	runURIs   int64 // this run
	bytes     int64 // crawl-wide
	rate      float64
	st        frontier.Stats
	warcFiles int // closed and being written: the summary's count once they close
	warcOpen  int // being written
	now       time.Time
}

func (p *progress) read(ctx context.Context, now time.Time) (progressLine, error) {
	t, err := p.src.totals(ctx)
	if err != nil {
		return progressLine{}, fmt.Errorf("progress totals: %w", err)
	}
	st, err := p.src.stats(ctx)
	if err != nil {
		return progressLine{}, fmt.Errorf("progress frontier stats: %w", err)
	}
	l := progressLine{elapsed: now.Sub(p.start), uris: t.URIs, runURIs: t.URIs - p.base.URIs, bytes: t.Bytes, st: st, now: now}
	if s := l.elapsed.Seconds(); s > 0 {
		l.rate = float64(l.runURIs) / s
	}
	// Those open now are closed as the run ends and then counted by the
	// summary, which globs the closed ones the same way.
	closed, _ := filepath.Glob(filepath.Join(p.src.warcDir, "*.warc.gz"))
	open, _ := filepath.Glob(filepath.Join(p.src.warcDir, "*.warc.gz.open"))
	l.warcFiles, l.warcOpen = len(closed)+len(open), len(open)
	return l, nil
}

// report writes one progress line; a frontier that cannot be read is
// logged at debug level, as the idle check does.
func (p *progress) report(ctx context.Context, now time.Time) {
	l, err := p.read(ctx, now)
	if err != nil {
		p.log.Debug("progress", "err", err)
		return
	}
	if p.out != nil {
		fmt.Fprintln(p.out, l.human())
		return
	}
	p.log.Info("crawling", l.attrs()...)
}

// human is the terminal line, e.g.
//
//	[1m05s] 1234 URIs, 19.0/s, 12.3 MB; queued 456, in flight 8; 3 waiting for retry, next in 25s; 2 WARC files (1 open)
func (l progressLine) human() string {
	s := fmt.Sprintf("[%s] %d URIs, %.1f/s, %s; queued %d, in flight %d", l.elapsed.Round(time.Second), l.uris, l.rate,
		humanBytes(l.bytes), l.st.Queued, l.st.InFlight)
	if l.st.RetryURIs > 0 {
		s += fmt.Sprintf("; %d waiting for retry, next in %s", l.st.RetryURIs, nextIn(l.st.NextRetry, l.now))
	}
	return s + fmt.Sprintf("; %d WARC files (%d open)", l.warcFiles, l.warcOpen)
}

// attrs are the structured log line's fields.
func (l progressLine) attrs() []any {
	attrs := []any{"elapsed", l.elapsed.Round(time.Second), "uris", l.uris, "uris_this_run", l.runURIs,
		"uris_per_second", fmt.Sprintf("%.2f", l.rate), "bytes", l.bytes, "warc_files", l.warcFiles, "warc_files_open", l.warcOpen}
	return append(attrs, progressAttrs(l.st, l.now)...)
}

// nextIn is how long until t, never negative (a due retry is "now").
func nextIn(t, now time.Time) string {
	if d := t.Sub(now).Round(time.Second); d > 0 {
		return d.String()
	}
	return "now"
}

// humanBytes writes n in decimal units, as disk and network tools do.
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
