package launcher

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
)

// Defaults for FeedReader.
const (
	// DefaultMaxLineBytes caps one feed line. W3ACT lines are a few hundred
	// bytes; a megabyte line is a broken export, and the cap keeps memory
	// bounded whatever the feed holds.
	DefaultMaxLineBytes = 1 << 20
	// DefaultMaxErrors is how many bad lines and seed warnings are kept in
	// FeedStats and logged one by one; the rest are only counted.
	DefaultMaxErrors = 100
)

// LineError is a bad feed line: where it is and why it was skipped.
type LineError struct {
	Source string
	Line   int
	Reason string
}

// Error returns "source:line: reason".
func (e LineError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Source, e.Line, e.Reason)
}

// FeedStats summarises one read of one feed.
type FeedStats struct {
	Source  string
	Lines   int // lines read, blank ones included
	Targets int // valid targets passed to the callback
	// BadLines counts every skipped line; Errors keeps the first
	// FeedReader.MaxErrors of them.
	BadLines int
	Errors   []LineError
	// DroppedSeeds counts invalid seeds removed from otherwise valid
	// targets; Warnings keeps the first FeedReader.MaxErrors of them.
	DroppedSeeds int
	Warnings     []LineError
}

// FeedReader reads crawl feeds. The zero value is ready to use with the
// defaults and no logging.
type FeedReader struct {
	// Logger receives one warning per bad line and dropped seed (up to
	// MaxErrors of each, then a count). Nil discards.
	Logger *slog.Logger
	// MaxLineBytes caps a line's length; longer lines are bad lines.
	// Zero means DefaultMaxLineBytes.
	MaxLineBytes int
	// MaxErrors bounds the errors and warnings kept and logged one by
	// one. Zero means DefaultMaxErrors.
	MaxErrors int
}

// ReadFeed streams the JSONL feed r, calling fn for every valid target in
// order. Bad lines are counted, kept (up to MaxErrors), logged and skipped;
// blank lines are skipped silently. source names the feed in errors and
// logs. ReadFeed stops with an error when ctx is done, reading r fails or fn
// returns an error; the stats so far are returned in every case.
//
// Lines are parsed a chunk at a time on all CPUs (parsing is most of the
// cost of a large feed) and handed to fn in feed order. A chunk ends when
// it is full or when no more input is buffered, so a feed arriving slowly
// is still handed on line by line.
func (fr FeedReader) ReadFeed(ctx context.Context, r io.Reader, source string, fn func(Target) error) (FeedStats, error) {
	maxLine, maxErrs, log := fr.settings()
	st := FeedStats{Source: source}
	br := bufio.NewReaderSize(r, 64<<10)
	chunk := make([]parsedLine, 0, feedChunk)
	deliver := func() error {
		parseLines(chunk, maxLine)
		for i := range chunk {
			if err := st.deliver(log, maxErrs, source, &chunk[i], fn); err != nil {
				return err
			}
		}
		chunk = chunk[:0]
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return st, fmt.Errorf("read feed %s at line %d: %w", source, st.Lines, err)
		}
		line, tooLong, err := readLine(br, nil, maxLine)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if derr := deliver(); derr != nil {
				return st, derr
			}
			return st, fmt.Errorf("read feed %s after line %d: %w", source, st.Lines, err)
		}
		st.Lines++
		if st.Lines == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		chunk = append(chunk, parsedLine{n: st.Lines, raw: line, tooLong: tooLong})
		if len(chunk) == feedChunk || br.Buffered() == 0 {
			if err := deliver(); err != nil {
				return st, err
			}
		}
	}
	if err := deliver(); err != nil {
		return st, err
	}
	st.logSuppressed(log, maxErrs)
	return st, nil
}

// feedChunk is how many lines ReadFeed parses together at most.
const feedChunk = 512

// parsedLine is one feed line and what it parsed to.
type parsedLine struct {
	n        int
	raw      []byte
	tooLong  bool
	blank    bool
	t        Target
	warnings []string
	err      error
}

// parseLines parses lines in parallel; parseTarget only reads its input.
func parseLines(lines []parsedLine, maxLine int) {
	workers := min(runtime.GOMAXPROCS(0), max(1, len(lines)/16))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(lines); i += workers {
				parseLine(&lines[i], maxLine)
			}
		}()
	}
	wg.Wait()
}

func parseLine(l *parsedLine, maxLine int) {
	if l.tooLong {
		l.err = fmt.Errorf("line longer than %d bytes", maxLine)
		return
	}
	line := bytes.TrimSpace(l.raw)
	if len(line) == 0 {
		l.blank = true
		return
	}
	l.t, l.warnings, l.err = parseTarget(line)
}

// deliver reports one parsed line's problems and hands its target to fn.
func (st *FeedStats) deliver(log *slog.Logger, maxErrs int, source string, l *parsedLine, fn func(Target) error) error {
	for _, w := range l.warnings {
		st.warn(log, maxErrs, LineError{source, l.n, w})
	}
	if l.err != nil {
		st.bad(log, maxErrs, LineError{source, l.n, l.err.Error()})
		return nil
	}
	if l.blank {
		return nil
	}
	t := l.t
	t.Source, t.Line = source, l.n
	st.Targets++
	if err := fn(t); err != nil {
		return fmt.Errorf("%s:%d: target %d: %w", source, l.n, t.ID, err)
	}
	return nil
}

func (fr FeedReader) settings() (maxLine, maxErrs int, log *slog.Logger) {
	maxLine, maxErrs, log = fr.MaxLineBytes, fr.MaxErrors, fr.Logger
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	if maxErrs <= 0 {
		maxErrs = DefaultMaxErrors
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return maxLine, maxErrs, log
}

func (st *FeedStats) bad(log *slog.Logger, maxErrs int, e LineError) {
	st.BadLines++
	if len(st.Errors) < maxErrs {
		st.Errors = append(st.Errors, e)
		log.Warn("bad feed line skipped", "source", e.Source, "line", e.Line, "reason", e.Reason)
	}
}

func (st *FeedStats) warn(log *slog.Logger, maxErrs int, e LineError) {
	st.DroppedSeeds++
	if len(st.Warnings) < maxErrs {
		st.Warnings = append(st.Warnings, e)
		log.Warn("feed seed dropped", "source", e.Source, "line", e.Line, "reason", e.Reason)
	}
}

// logSuppressed reports the bad lines and warnings that were only counted,
// so a broken feed cannot flood the log but the totals are still visible.
func (st *FeedStats) logSuppressed(log *slog.Logger, maxErrs int) {
	if n := st.BadLines - len(st.Errors); n > 0 {
		log.Warn("further bad feed lines not logged", "source", st.Source, "count", n, "limit", maxErrs)
	}
	if n := st.DroppedSeeds - len(st.Warnings); n > 0 {
		log.Warn("further dropped seeds not logged", "source", st.Source, "count", n, "limit", maxErrs)
	}
}

// readLine reads one line into buf without its line ending. A line longer
// than maxLine is consumed to its end but not kept: tooLong is set and the
// line is returned empty, so memory stays bounded by maxLine. It returns
// io.EOF only when no line is left.
func readLine(br *bufio.Reader, buf []byte, maxLine int) (line []byte, tooLong bool, err error) {
	started := false
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			if started && errors.Is(err, io.EOF) {
				return buf, tooLong, nil
			}
			return buf, tooLong, err
		}
		started = true
		if !tooLong {
			if len(buf)+len(chunk) > maxLine {
				tooLong, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		if !isPrefix {
			return buf, tooLong, nil
		}
	}
}
