// Package cdxforward sends CDX lines to an external OutbackCDX, for sites
// that keep their own index (UKWA's Heritrix posted every crawled URI to one
// with its OutbackCDXPersistStoreProcessor). Lines are queued, packed into
// batched POSTs of CDX11 to <url>/<collection>, and retried with
// exponential backoff and jitter.
//
// No line is dropped silently: Forward returns only once OutbackCDX has
// accepted every line it was given, or with an error. The queue is bounded;
// when it is full Forward blocks, which holds back the caller (a Kafka
// consumer that commits its offsets only after Forward succeeds) instead
// of growing memory or dropping lines.
package cdxforward

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// Defaults for Options.
const (
	DefaultBatchLines     = 1000
	DefaultQueueLines     = 10000
	DefaultMinBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	DefaultRetryFor       = 5 * time.Minute
	DefaultRequestTimeout = 60 * time.Second
)

// ErrStopped is returned by Forward when Run has ended.
var ErrStopped = errors.New("cdxforward: forwarder stopped")

// Options configures a Forwarder.
type Options struct {
	// URL is the OutbackCDX base URL, e.g. http://outbackcdx:8080.
	URL string
	// Collection is the index lines are posted to (<URL>/<Collection>).
	Collection string
	// Token, when set, gives the bearer token sent with each POST, asked
	// afresh each time so a rotated token file takes effect (a Trawler
	// index refuses writes without one); nil or "" sends none, as
	// OutbackCDX needs none.
	Token func() string
	// Client sends the requests. Nil means a client with
	// DefaultRequestTimeout.
	Client *http.Client
	// BatchLines bounds the lines of one POST. Zero means
	// DefaultBatchLines.
	BatchLines int
	// QueueLines bounds the lines waiting to be sent; Forward blocks
	// while the queue is full. Zero means DefaultQueueLines.
	QueueLines int
	// MinBackoff and MaxBackoff bound the doubling, jittered wait between
	// attempts at one POST. Zero means the defaults.
	MinBackoff, MaxBackoff time.Duration
	// RetryFor is how long one POST is retried before its lines fail
	// (Forward returns an error and the caller keeps them). A 4xx answer
	// other than 408 and 429 fails at once: sending the same lines again
	// cannot help. Zero means DefaultRetryFor.
	RetryFor time.Duration
	// Logger receives retries and failures. Nil discards them.
	Logger *slog.Logger
	// Registerer receives the metrics. Nil registers nothing.
	Registerer prometheus.Registerer
}

// Forwarder queues lines and posts them. Forward may be called from many
// goroutines; Run must be running for lines to move.
type Forwarder struct {
	o        Options
	endpoint string
	log      *slog.Logger
	m        *metrics
	queue    chan *chunk
	stopped  chan struct{}
	running  atomic.Bool
}

// chunk is one slice of a Forward call, at most BatchLines lines.
type chunk struct {
	lines []string
	done  chan error // receives one result
}

// New validates opts and builds a Forwarder.
func New(opts Options) (*Forwarder, error) {
	endpoint, err := endpointURL(opts.URL, opts.Collection)
	if err != nil {
		return nil, err
	}
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("cdxforward metrics: %w", err)
	}
	return &Forwarder{
		o: opts, endpoint: endpoint, log: log.With("forward_to", endpoint), m: m,
		// Chunks hold at most BatchLines lines, so this many queued
		// chunks bound the queue at QueueLines lines.
		queue:   make(chan *chunk, max(opts.QueueLines/opts.BatchLines, 1)),
		stopped: make(chan struct{}),
	}, nil
}

// defaults fills zero options and rejects negative ones.
func (o *Options) defaults() error {
	if o.BatchLines < 0 || o.QueueLines < 0 || o.MinBackoff < 0 || o.MaxBackoff < 0 || o.RetryFor < 0 {
		return errors.New("cdxforward: negative BatchLines, QueueLines, backoff or RetryFor")
	}
	o.BatchLines = cmpOr(o.BatchLines, DefaultBatchLines)
	o.QueueLines = max(cmpOr(o.QueueLines, DefaultQueueLines), o.BatchLines)
	o.MinBackoff = cmpOr(o.MinBackoff, DefaultMinBackoff)
	o.MaxBackoff = max(cmpOr(o.MaxBackoff, DefaultMaxBackoff), o.MinBackoff)
	o.RetryFor = cmpOr(o.RetryFor, DefaultRetryFor)
	if o.Client == nil {
		o.Client = &http.Client{Timeout: DefaultRequestTimeout}
	}
	return nil
}

func cmpOr[N int | time.Duration](v, def N) N {
	if v == 0 {
		return def
	}
	return v
}

// endpointURL checks the base URL and appends the collection.
func endpointURL(base, collection string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("cdxforward: URL %q: %w", base, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("cdxforward: URL %q: want http(s)://host[:port][/path]", base)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("cdxforward: URL %q: no query or fragment, please", base)
	}
	if collection == "" || strings.ContainsAny(collection, "/?#% ") {
		return "", fmt.Errorf("cdxforward: collection %q: want a non-empty name without / ? # %% or spaces", collection)
	}
	return strings.TrimRight(u.String(), "/") + "/" + collection, nil
}

// Endpoint is the URL lines are posted to.
func (f *Forwarder) Endpoint() string { return f.endpoint }

// Forward queues lines (as CDX11) and waits until OutbackCDX has accepted
// all of them. It returns an error if a POST failed for good (the lines may
// be forwarded again: OutbackCDX stores the same capture once), ctx ended,
// or Run stopped.
func (f *Forwarder) Forward(ctx context.Context, lines []cdx.Line) error {
	if len(lines) == 0 {
		return nil
	}
	chunks := make([]*chunk, 0, len(lines)/f.o.BatchLines+1)
	for start := 0; start < len(lines); start += f.o.BatchLines {
		end := min(start+f.o.BatchLines, len(lines))
		c := &chunk{lines: make([]string, 0, end-start), done: make(chan error, 1)}
		for _, l := range lines[start:end] {
			c.lines = append(c.lines, l.CDX11())
		}
		if err := f.enqueue(ctx, c); err != nil {
			return err
		}
		chunks = append(chunks, c)
	}
	var errs []error
	for _, c := range chunks {
		select {
		case err := <-c.done:
			if err != nil {
				errs = append(errs, err)
			}
		case <-ctx.Done():
			return fmt.Errorf("cdxforward: waiting for %s: %w", f.endpoint, ctx.Err())
		case <-f.stopped:
			return ErrStopped
		}
	}
	return errors.Join(errs...)
}

// enqueue adds a chunk, blocking while the queue is full.
func (f *Forwarder) enqueue(ctx context.Context, c *chunk) error {
	select {
	case f.queue <- c:
		f.m.queued.Add(float64(len(c.lines)))
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cdxforward: queue to %s full: %w", f.endpoint, ctx.Err())
	case <-f.stopped:
		return ErrStopped
	}
}

// Run sends queued lines until ctx ends. It may be called once.
func (f *Forwarder) Run(ctx context.Context) error {
	if !f.running.CompareAndSwap(false, true) {
		return errors.New("cdxforward: Run called twice")
	}
	defer close(f.stopped)
	f.log.Info("forwarding CDX lines")
	var carry *chunk
	for {
		first := carry
		if first == nil {
			select {
			case <-ctx.Done():
				return nil
			case first = <-f.queue:
			}
		}
		var batch []*chunk
		batch, carry = f.fill(first)
		err := f.send(ctx, batch)
		for _, c := range batch {
			f.m.queued.Sub(float64(len(c.lines)))
			c.done <- err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// fill adds queued chunks to first while the batch stays within BatchLines,
// so small Forward calls share a POST. A chunk that does not fit is
// returned as carry, to start the next batch.
func (f *Forwarder) fill(first *chunk) (batch []*chunk, carry *chunk) {
	batch = []*chunk{first}
	n := len(first.lines)
	for n < f.o.BatchLines {
		select {
		case c := <-f.queue:
			if n+len(c.lines) > f.o.BatchLines {
				return batch, c
			}
			batch = append(batch, c)
			n += len(c.lines)
		default:
			return batch, nil
		}
	}
	return batch, nil
}
