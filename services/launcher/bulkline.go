package launcher

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/trawler-crawl/trawler/pkg/surt"
)

// chunkLines is how many input lines are parsed together, in parallel:
// URL parsing (host key, SURT prefix) is most of a bulk load's work.
const chunkLines = 1024

// bulkLine is one input line and what it turns into.
type bulkLine struct {
	n       int    // line number
	raw     []byte // the line, without its ending
	tooLong bool

	hash     string
	seeds    []bulkSeed
	err      error // why the line is bad
	dropped  int   // invalid seeds dropped from a valid target
	excluded bool  // a NEVERCRAWL target
}

// bulkSeed is one seed ready to send.
type bulkSeed struct {
	url    string
	prefix string // its SURT prefix, for the scope file
	key    string
	value  []byte // nil for a line before the checkpoint (not sent)
}

// readInput reads the input a chunk at a time and handles every line.
func (b *bulkRun) readInput(ctx context.Context, r io.Reader, name string) error {
	br := bufio.NewReaderSize(r, 256<<10)
	chunk := make([]bulkLine, 0, chunkLines)
	n := 0
	for {
		line, tooLong, err := readLine(br, nil, DefaultMaxLineBytes)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("bulk load: read %s after line %d: %w", name, n, err)
		}
		n++
		chunk = append(chunk, bulkLine{n: n, raw: line, tooLong: tooLong})
		if len(chunk) == chunkLines {
			if err := b.handleChunk(ctx, name, chunk); err != nil {
				return err
			}
			chunk = chunk[:0]
		}
	}
	if err := b.handleChunk(ctx, name, chunk); err != nil {
		return err
	}
	if b.sum.Lines < b.resume.Line {
		return fmt.Errorf("bulk load %s: the input has %d lines but the checkpoint of job %s is at line %d: a different input? (--restart sends it all again)",
			name, b.sum.Lines, b.sum.Job, b.resume.Line)
	}
	return nil
}

// handleChunk parses a chunk's lines in parallel, then sends them in
// order, so checkpoints stay exact.
func (b *bulkRun) handleChunk(ctx context.Context, name string, chunk []bulkLine) error {
	workers := min(runtime.GOMAXPROCS(0), max(1, len(chunk)/64))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(chunk); i += workers {
				b.parse(&chunk[i])
			}
		}()
	}
	wg.Wait()
	for i := range chunk {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("bulk load %s at line %d: %w", name, b.sum.Lines, err)
		}
		if err := b.line(ctx, name, &chunk[i]); err != nil {
			return err
		}
	}
	b.progress()
	return nil
}

// line sends one parsed line (unless it is before the checkpoint) and
// writes its seeds' prefixes to the scope file.
func (b *bulkRun) line(ctx context.Context, name string, l *bulkLine) error {
	b.sum.Lines = l.n
	resumed := l.n <= b.resume.Line
	if l.n == b.resume.Line && l.hash != b.resume.Hash {
		return fmt.Errorf("bulk load %s:%d: the line differs from the one the checkpoint of job %s recorded: a different input? (--restart sends it all again)",
			name, l.n, b.sum.Job)
	}
	if resumed {
		b.sum.Resumed++
	}
	b.sum.DroppedSeeds += l.dropped
	if l.excluded {
		b.sum.Excluded++
	}
	if l.err != nil {
		b.bad(LineError{Source: name, Line: l.n, Reason: l.err.Error()})
	}
	if b.scope != nil {
		for _, s := range l.seeds {
			if err := b.scope.AddPrefix(s.prefix); err != nil {
				return fmt.Errorf("bulk load %s:%d: %w", name, l.n, err)
			}
		}
	}
	b.doneLine, b.doneHash = l.n, l.hash
	if resumed {
		return nil
	}
	for _, s := range l.seeds {
		b.deps.Producer.ProduceAsync(b.pctx, b.sum.Topic, s.key, s.value)
	}
	b.queued += len(l.seeds)
	b.since++
	if b.since >= b.cfg.CheckpointEvery {
		return b.checkpoint(ctx)
	}
	return nil
}

// parse fills in what l turns into: no seeds for a blank or comment line
// or a NEVERCRAWL target, an error for a bad line. It only reads b, so
// lines are parsed in parallel.
func (b *bulkRun) parse(l *bulkLine) {
	l.hash = lineHash(l.raw)
	if l.tooLong {
		l.err = fmt.Errorf("line longer than %d bytes", DefaultMaxLineBytes)
		return
	}
	line := bytes.TrimSpace(l.raw)
	if len(line) == 0 || line[0] == '#' {
		return
	}
	send := l.n > b.resume.Line
	if line[0] != '{' {
		u := bareHostURL(string(line))
		if l.err = checkSeed(u); l.err == nil {
			l.seeds, l.err = b.seeds([]string{u}, u, nil, false, send)
		}
		return
	}
	t, warnings, err := parseTarget(line)
	l.dropped = len(warnings)
	switch {
	case err != nil:
		l.err = err
	case NeverCrawled(t):
		l.excluded = true
	default:
		l.seeds, l.err = b.seeds(t.Seeds, SourceTag(t), sheetsFor(t), t.WebRender, send)
	}
}

// seeds builds the launch messages of urls (only their prefixes unless
// send), or the reason the line is bad.
func (b *bulkRun) seeds(urls []string, source string, sheets []string, render, send bool) ([]bulkSeed, error) {
	out := make([]bulkSeed, 0, len(urls))
	for _, u := range urls {
		s := bulkSeed{url: u, prefix: surt.ImpliedPrefix(u)}
		if s.prefix == "" {
			return nil, fmt.Errorf("no SURT prefix for %q", u)
		}
		if send {
			key, err := b.deps.KeyFunc(u)
			if err != nil {
				return nil, fmt.Errorf("no host key: %w", err)
			}
			value, err := encodeLaunch(SeedLaunch(u, source, sheets, render, b.now))
			if err != nil {
				return nil, err
			}
			s.key, s.value = key, value[:len(value)-1] // without the newline
		}
		out = append(out, s)
	}
	return out, nil
}

// bareHostURL reads a line without a scheme ("example.org" or
// "example.org/path") as an http URL, as seed lists often hold host names.
func bareHostURL(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 && !strings.ContainsAny(s[:i], "./") {
		return s // it has a scheme, which checkSeed judges
	}
	return "http://" + s
}
