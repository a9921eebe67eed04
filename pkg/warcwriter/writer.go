package warcwriter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"
)

// Writer writes captures to rotating WARC files. It is safe for concurrent
// use: up to Config.Parallel goroutines write at once, each to its own file.
type Writer struct {
	cfg       Config
	log       *slog.Logger
	now       func() time.Time
	onClose   func(ClosedFile)
	reg       prometheus.Registerer
	serial    *SerialCounter
	bufferDir string
	metrics   *metrics
	build     builder

	// tokens holds one token per free slot; taking one entitles the taker to
	// pop a slot from free. Close takes them all.
	tokens chan struct{}
	mu     sync.Mutex // guards free
	// free is a stack, so the most recently used file is reused first and
	// a lightly loaded writer does not keep Parallel files open.
	free []*slot

	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// New validates cfg, creates cfg.Dir if needed and returns a Writer. Files are
// created on first write.
func New(cfg Config, opts ...Option) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Writer{cfg: cfg, now: time.Now, done: make(chan struct{})}
	for _, o := range opts {
		o(w)
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.serial == nil {
		w.serial = &SerialCounter{}
	}
	f, err := formatOf(cfg.Version)
	if err != nil {
		return nil, err
	}
	w.build = builder{bufferDir: w.bufferDir, format: f}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create warc dir %s: %w", cfg.Dir, err)
	}
	if w.metrics, err = newMetrics(w.reg); err != nil {
		return nil, err
	}
	w.tokens = make(chan struct{}, cfg.Parallel)
	for range cfg.Parallel {
		s, err := newSlot(w)
		if err != nil {
			return nil, err
		}
		w.free = append(w.free, s)
		w.tokens <- struct{}{}
	}
	return w, nil
}

// WriteCapture writes the request, the response (or revisit) and, if
// c.Metadata is set, the metadata record of one fetch to one file, linked by
// WARC-Concurrent-To, and returns the location of the response (or revisit)
// record. Invalid input is reported with ErrInvalidInput before anything is
// written; a failed write is cut back out of the file. ctx bounds the wait
// for a free file; once writing has begun it runs to the end, since a
// half-written record would corrupt the file.
func (w *Writer) WriteCapture(ctx context.Context, c Capture) (Location, error) {
	if err := ctx.Err(); err != nil {
		return Location{}, err
	}
	if err := validateCapture(&c); err != nil {
		return Location{}, err
	}
	recs, err := w.buildCapture(&c)
	if err != nil {
		return Location{}, err
	}
	defer closeRecords(recs)
	locs, err := w.write(ctx, recs)
	if err != nil {
		return Location{}, fmt.Errorf("write capture %s: %w", c.URL, err)
	}
	locs[1].RecordID = recs[1].WarcHeader().Get(gowarc.WarcRecordID)
	return locs[1], nil
}

// buildCapture returns request, response-or-revisit and optional metadata,
// with request and metadata pointing at the response by WARC-Concurrent-To.
func (w *Writer) buildCapture(c *Capture) ([]gowarc.WarcRecord, error) {
	req, err := w.build.request(c)
	if err != nil {
		return nil, err
	}
	var main gowarc.WarcRecord
	if c.Revisit != nil {
		main, err = w.build.revisit(c)
	} else {
		main, err = w.build.response(c, false)
	}
	if err != nil {
		_ = req.Close()
		return nil, err
	}
	recs := []gowarc.WarcRecord{req, main}
	if c.Metadata != nil {
		meta, err := w.build.metadata(c)
		if err != nil {
			closeRecords(recs)
			return nil, err
		}
		recs = append(recs, meta)
	}
	for _, r := range recs {
		if r != main {
			r.WarcHeader().AddId(gowarc.WarcConcurrentTo, main.RecordId())
		}
	}
	return recs, nil
}

// WriteDNS writes a DNS lookup as a response record with Content-Type
// text/dns and target dns:host; ip is the resolver's address and answer
// the record block (e.g. the lookup time and the answer records, one a line).
func (w *Writer) WriteDNS(ctx context.Context, host string, date time.Time, ip string, answer []byte) (Location, error) {
	if err := ctx.Err(); err != nil {
		return Location{}, err
	}
	if err := validateDNS(host, date, ip, answer); err != nil {
		return Location{}, err
	}
	rec, err := w.build.dns(host, date, ip, answer)
	if err != nil {
		return Location{}, err
	}
	defer func() { _ = rec.Close() }()
	locs, err := w.write(ctx, []gowarc.WarcRecord{rec})
	if err != nil {
		return Location{}, fmt.Errorf("write dns:%s: %w", host, err)
	}
	locs[0].RecordID = rec.WarcHeader().Get(gowarc.WarcRecordID)
	return locs[0], nil
}

func closeRecords(recs []gowarc.WarcRecord) {
	for _, r := range recs {
		_ = r.Close()
	}
}

// write writes recs to one free file, then reports a file that the write
// filled up once the file is released.
func (w *Writer) write(ctx context.Context, recs []gowarc.WarcRecord) ([]Location, error) {
	s, err := w.acquire(ctx)
	if err != nil {
		return nil, err
	}
	locs, closed, err := s.writeRecords(recs)
	w.release(s)
	if closed != nil {
		w.notifyClosed(*closed)
	}
	return locs, err
}

// acquire waits for a free slot.
func (w *Writer) acquire(ctx context.Context) (*slot, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-w.done:
		return nil, ErrClosed
	case <-w.tokens:
	}
	// select picks at random among ready cases: a token may be won after
	// Close began, and Close needs it back.
	select {
	case <-w.done:
		w.tokens <- struct{}{}
		return nil, ErrClosed
	default:
	}
	w.mu.Lock()
	s := w.free[len(w.free)-1]
	w.free = w.free[:len(w.free)-1]
	w.mu.Unlock()
	return s, nil
}

func (w *Writer) release(s *slot) {
	w.mu.Lock()
	w.free = append(w.free, s)
	w.mu.Unlock()
	w.tokens <- struct{}{}
}

func (w *Writer) notifyClosed(cf ClosedFile) {
	w.log.Info("warc file closed", "path", cf.Path, "size", cf.Size, "records", cf.Records)
	if w.onClose != nil {
		w.onClose(cf)
	}
}

// Close waits for writes in progress, then closes every open file, renames
// it to its final name and calls the OnClose function. Later writes fail
// with ErrClosed; later calls of Close return the first call's result.
func (w *Writer) Close() error {
	w.closeOnce.Do(func() {
		close(w.done)
		for range w.cfg.Parallel {
			<-w.tokens
		}
		var errs []error
		var closed []ClosedFile
		for _, s := range w.free {
			cf, err := s.close()
			if err != nil {
				errs = append(errs, err)
			} else if cf != nil {
				closed = append(closed, *cf)
			}
		}
		for _, cf := range closed {
			w.notifyClosed(cf)
		}
		w.closeErr = errors.Join(errs...)
	})
	return w.closeErr
}
