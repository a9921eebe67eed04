package cdxindex

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxLineBytes bounds one CDX line; longer lines are bad lines.
const maxLineBytes = 1 << 20

// LineError is a CDX line that could not be parsed.
type LineError struct {
	Line int    // 1-based line number in the input
	Text string // the line, clipped to 200 bytes
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("line %d: %v: %q", e.Line, e.Err, e.Text)
}

func (e *LineError) Unwrap() error { return e.Err }

// LoadOptions configures Load.
type LoadOptions struct {
	// BatchLines is the number of lines per durable batch; default 10000.
	BatchLines int
	// OnBadLine is called for each line that cannot be parsed; the line is
	// skipped. Nil skips silently (the count is still returned).
	OnBadLine func(*LineError)
}

// LoadStats counts what Load did.
type LoadStats struct {
	Added int64 // lines written (a capture already present counts again)
	Bad   int64 // lines skipped
}

// Load streams CDX lines (CDX11, CDX9/10/14 or CDXJ, as POST accepts them)
// from r into collection in durable batches, skipping the " CDX" header and
// reporting bad lines through opts.OnBadLine. Unlike POST, which is
// all-or-nothing, Load keeps what it has written when it stops on an error.
func (ix *Index) Load(ctx context.Context, collection string, r io.Reader, opts LoadOptions) (LoadStats, error) {
	var st LoadStats
	if err := ValidateCollection(collection); err != nil {
		return st, err
	}
	if opts.BatchLines <= 0 {
		opts.BatchLines = 10000
	}
	batch := make([]capture, 0, opts.BatchLines)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := ix.write(ctx, collection, batch, opPut); err != nil {
			return err
		}
		st.Added += int64(len(batch))
		batch = batch[:0]
		return nil
	}
	err := scanLines(r, func(n int, line string) error {
		if strings.HasPrefix(line, " CDX") {
			return nil
		}
		c, err := parseIngestLine(line)
		if err != nil {
			st.Bad++
			ix.metrics.lines.WithLabelValues(collection, "bad").Inc()
			if opts.OnBadLine != nil {
				opts.OnBadLine(&LineError{Line: n, Text: clip(line), Err: err})
			}
			return nil
		}
		batch = append(batch, c)
		if len(batch) >= opts.BatchLines {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return st, err
}

// ingestResult is what one POST did.
type ingestResult struct {
	added int64
	bad   *LineError // the first bad line, when not skipping
}

// ingest parses every line of r and, when all are good or skipBad is set,
// writes the good ones in one durable batch: like OutbackCDX, a POST with a
// bad line writes nothing unless badLines=skip.
func (ix *Index) ingest(ctx context.Context, collection string, r io.Reader, skipBad bool) (ingestResult, error) {
	var res ingestResult
	var caps []capture
	err := scanLines(r, func(n int, line string) error {
		if strings.HasPrefix(line, " CDX") {
			return nil
		}
		c, err := parseIngestLine(line)
		if err != nil {
			ix.metrics.lines.WithLabelValues(collection, "bad").Inc()
			if skipBad {
				ix.log.Warn("skipping bad cdx line", "collection", collection, "line", n, "text", clip(line), "err", err)
				return nil
			}
			res.bad = &LineError{Line: n, Text: line, Err: err}
			return errStop
		}
		caps = append(caps, c)
		return nil
	})
	return ix.commit(ctx, collection, caps, opPut, err, res)
}

// remove parses every line of r and deletes the captures in one durable
// batch; any bad line fails the whole request, as in OutbackCDX. With
// recanonicalize false the line's own urlkey is used instead of one
// computed from its URL.
func (ix *Index) remove(ctx context.Context, collection string, r io.Reader, recanonicalize bool) (ingestResult, error) {
	var res ingestResult
	var caps []capture
	err := scanLines(r, func(n int, line string) error {
		if strings.HasPrefix(line, " CDX") {
			return nil
		}
		c, err := parseIngestLine(line)
		if err == nil && !recanonicalize {
			c.urlkey, _, _ = strings.Cut(line, " ")
			err = c.checkKeyFields()
		}
		if err != nil {
			res.bad = &LineError{Line: n, Text: line, Err: err}
			return errStop
		}
		caps = append(caps, c)
		return nil
	})
	return ix.commit(ctx, collection, caps, opDelete, err, res)
}

// commit writes the captures a scan collected in one durable batch, unless
// the scan stopped at a bad line (reported in res) or failed.
func (ix *Index) commit(ctx context.Context, collection string, caps []capture, op writeOp, scanErr error, res ingestResult) (ingestResult, error) {
	if errors.Is(scanErr, errStop) {
		return res, nil
	}
	if scanErr != nil {
		return res, scanErr
	}
	if err := ix.write(ctx, collection, caps, op); err != nil {
		return res, err
	}
	res.added = int64(len(caps))
	return res, nil
}

var errStop = errors.New("stop")

// scanLines calls fn for each line of r, numbered from 1. Lines end at
// "\n", "\r\n" or a lone "\r", as Java's BufferedReader.readLine splits
// them; a line longer than maxLineBytes is an error.
func scanLines(r io.Reader, fn func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	sc.Split(splitJavaLines)
	n := 0
	for sc.Scan() {
		n++
		if err := sc.Err(); err != nil {
			// A read error makes the scanner hand over a cut-off last
			// line; the error, not that line, is the problem.
			return fmt.Errorf("read line %d: %w", n, err)
		}
		if err := fn(n, sc.Text()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read line %d: %w", n+1, err)
	}
	return nil
}

func splitJavaLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // a "\r" at the end of the buffer: wait for what follows
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// clip shortens a line quoted in a message.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
