// Package cdxwriter is the cdxwriter role (ARCHITECTURE.md 11): it consumes
// a crawl's crawled events in batches and, for each batch, writes the
// capture records to the crawl-time CDX index (Pebble, served with
// OutbackCDX's HTTP API) and updates the recently-crawled DB in Redis, both
// before the batch's offsets are committed (at-least-once). Both writes are
// idempotent and order-safe, so a redelivered or replayed batch changes
// nothing: the index keys a capture by URL key, timestamp, file and offset,
// and the DB keeps the newest value of each field.
//
// Optionally, a second consumer group forwards the same lines to an
// external OutbackCDX (pkg/cdxforward), committing only what that index
// accepted; being a separate group, an outage there never holds back the
// index or the DB the crawl depends on.
//
// Events that cannot be used (bad JSON, wrong types, no usable time, a
// record the index rejects) go to <crawl>.dlq with the DLQ headers of
// pkg/kafka.
package cdxwriter

import (
	"context"
	"errors"
	"fmt"
	"github.com/trawler-crawl/trawler/internal/together"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxforward"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// Index is the CDX index the writer fills (pkg/cdxindex.Index). Put must be
// idempotent and durable when it returns; a line it cannot index fails the
// call with an error wrapping cdxindex.ErrBadLine.
type Index interface {
	Put(ctx context.Context, collection string, lines []cdx.Line) error
}

// Deps are the writer's dependencies.
type Deps struct {
	// Kafka is the broker connection.
	Kafka kafka.Config
	// Redis holds the recently-crawled DB.
	Redis redis.UniversalClient
	// Index receives the lines. Nil: Run opens pkg/cdxindex in
	// Config.IndexDir() and serves its OutbackCDX API on Config.CDXAddr.
	Index Index
	// API is served on Config.CDXAddr when Index is given; nil: no API.
	API http.Handler
	// APIListener, when set, is where API is served instead of
	// Config.CDXAddr: a listener the caller bound before starting
	// anything else (standalone). Run owns it.
	APIListener net.Listener
	// ForwardClient sends forwarded lines; nil: cdxforward's default.
	ForwardClient *http.Client
	// LagInterval is how often consumer lag is polled; zero: 15s.
	LagInterval time.Duration
	// Logger and Registerer receive logs and metrics; nil discards.
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Writer is the cdxwriter role.
type Writer struct {
	cfg    Config
	d      Deps
	log    *slog.Logger
	m      *metrics
	recent *recentdb.DB
	// histories are the recently-crawled DBs by stream ("" for the
	// default, recent): streams never share history.
	histories map[string]*recentdb.DB
	index     Index
	dlq       *kgo.Client // set during Run: dead-letters lines the index rejects
	fw        *cdxforward.Forwarder
	apiAddr   atomic.Value // string, once the API listens
	running   atomic.Bool
}

// New validates the configuration and builds the writer; Run connects.
func New(cfg Config, d Deps) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := d.Kafka.Validate(); err != nil {
		return nil, fmt.Errorf("cdxwriter: %w", err)
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	histories, err := openHistories(cfg, d)
	if err != nil {
		return nil, fmt.Errorf("cdxwriter: %w", err)
	}
	recent := histories[""]
	if d.LagInterval <= 0 {
		d.LagInterval = 15 * time.Second
	}
	m, err := newMetrics(d.Registerer)
	if err != nil {
		return nil, fmt.Errorf("cdxwriter metrics: %w", err)
	}
	w := &Writer{cfg: cfg, d: d, log: d.Logger, m: m, recent: recent, histories: histories, index: d.Index}
	if cfg.ForwardURL != "" {
		tok, err := admin.OpenTokenFile(cfg.ForwardTokenFile, d.Logger.With("part", "forward"))
		if err != nil {
			return nil, fmt.Errorf("cdxwriter: forward-token-file: %w", err)
		}
		w.fw, err = cdxforward.New(cdxforward.Options{URL: cfg.ForwardURL, Collection: cfg.Collection(), Token: tok.Value,
			Client: d.ForwardClient, Logger: d.Logger, Registerer: d.Registerer})
		if err != nil {
			return nil, fmt.Errorf("cdxwriter: %w", err)
		}
	}
	w.apiAddr.Store("")
	return w, nil
}

// Recent is the recently-crawled DB the writer fills for events that name
// no stream (Config.Stream's history).
func (w *Writer) Recent() *recentdb.DB { return w.recent }

// openHistories opens the recently-crawled DB of each stream of the crawl:
// for fc, npld and bypm (and "" for Config.Stream's); for dc, one.
func openHistories(cfg Config, d Deps) (map[string]*recentdb.DB, error) {
	opts := recentdb.Options{Crawl: cfg.Crawl, TTL: cfg.RecentTTL, Logger: d.Logger}
	if cfg.Crawl != "fc" {
		db, err := recentdb.New(d.Redis, opts)
		return map[string]*recentdb.DB{"": db}, err
	}
	out := map[string]*recentdb.DB{}
	for _, s := range []string{"npld", "bypm"} {
		opts.Stream = s
		db, err := recentdb.New(d.Redis, opts)
		if err != nil {
			return nil, err
		}
		out[s] = db
	}
	out[""] = out[cfg.Stream]
	return out, nil
}

// APIAddr is the address the OutbackCDX API listens on; empty until Run
// has started it, or when there is none.
func (w *Writer) APIAddr() string { return w.apiAddr.Load().(string) }

// Run consumes until ctx is canceled, then finishes the batch in hand,
// commits it and stops. It returns an error when a part cannot start or
// fails for good. Run may be called once.
func (w *Writer) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("cdxwriter: Run called twice")
	}
	api, closeIndex, err := w.openIndex()
	if err != nil {
		return err
	}
	defer closeIndex()
	w.dlq, err = kafka.NewClient(w.d.Kafka, kafka.WithSlog(w.log))
	if err != nil {
		return fmt.Errorf("cdxwriter: %w", err)
	}
	defer w.dlq.Close()

	parts := []func(context.Context) error{w.pollLag}
	for range max(w.cfg.Consumers, 1) {
		parts = append(parts, w.consume)
	}
	if api != nil && (w.cfg.CDXAddr != "" || w.d.APIListener != nil) {
		serve, err := w.listenAPI(api)
		if err != nil {
			return err
		}
		parts = append(parts, serve)
	}
	if w.fw != nil {
		parts = append(parts, w.forward)
	}
	return together.Run(ctx, parts...)
}

// consume runs one member of the indexing consumer group.
func (w *Writer) consume(ctx context.Context) error {
	c, err := kafka.NewConsumer(w.d.Kafka, kafka.ConsumerOptions[event]{
		Group: w.cfg.Group(), Topics: []string{w.cfg.Topic()}, DLQTopic: w.cfg.DLQTopic(),
		Decode: decodeRecord, Handle: w.handle, MaxBatch: w.cfg.Batch,
		Logger: w.log, Registerer: consumerRegisterer("cdxwriter", w.d.Registerer),
	})
	if err != nil {
		return fmt.Errorf("cdxwriter consumer: %w", err)
	}
	return c.Run(ctx)
}

// consumerRegisterer labels a consumer's metrics with its name, as every
// pkg/kafka consumer in the process must be (the worker's ingest consumer
// is "ingest"): one metric name cannot have different label names.
func consumerRegisterer(name string, reg prometheus.Registerer) prometheus.Registerer {
	return prometheus.WrapRegistererWith(prometheus.Labels{"consumer": name}, reg)
}

// forward runs the forwarding consumer group and its forwarder. The
// forwarder outlives the consumer, so the batch in hand at shutdown can
// still be sent and committed.
func (w *Writer) forward(ctx context.Context) error {
	c, err := kafka.NewConsumer(w.d.Kafka, kafka.ConsumerOptions[event]{
		// Bad events are dead-lettered by the indexing group already;
		// this group only skips them.
		Group: w.cfg.ForwardGroup(), Topics: []string{w.cfg.Topic()},
		Decode: decodeRecord, Handle: w.handleForward, MaxBatch: w.cfg.Batch,
		Logger: w.log.With("part", "forward"), Registerer: consumerRegisterer("cdxforward", w.d.Registerer),
	})
	if err != nil {
		return fmt.Errorf("cdxwriter forward consumer: %w", err)
	}
	fwCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	fwDone := make(chan error, 1)
	go func() { fwDone <- w.fw.Run(fwCtx) }()
	err = c.Run(ctx)
	stop()
	return errors.Join(err, <-fwDone)
}
