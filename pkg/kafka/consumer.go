package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults for ConsumerOptions.
const (
	DefaultMaxBatch      = 500
	DefaultMinBackoff    = 100 * time.Millisecond
	DefaultMaxBackoff    = 30 * time.Second
	DefaultShutdownGrace = 30 * time.Second
)

// Item is one decoded record of a batch.
type Item[T any] struct {
	Value  T
	Record *kgo.Record
}

// ConsumerOptions configures a Consumer.
type ConsumerOptions[T any] struct {
	// Group is the consumer group; offsets are committed under it.
	Group string
	// Topics are consumed together.
	Topics []string
	// DLQTopic receives records Decode rejects, with DLQ* headers. Empty
	// means such records are logged, counted and skipped.
	DLQTopic string
	// Decode turns a record into a value; an error (or panic) sends the
	// record to the dead-letter topic.
	Decode func(rec *kgo.Record) (T, error)
	// Handle processes a batch of decoded records. Its offsets are
	// committed only after it returns nil; an error retries the same batch
	// with backoff, so Handle must tolerate seeing records again.
	Handle func(ctx context.Context, batch []Item[T]) error
	// Logger receives consumer events. Nil discards them.
	Logger *slog.Logger
	// Registerer receives the consumer's metrics. Nil registers nothing.
	Registerer prometheus.Registerer
	// MaxBatch bounds the records handed to one Handle call. Zero means
	// DefaultMaxBatch.
	MaxBatch int
	// MinBackoff and MaxBackoff bound the doubling wait between retries of
	// a failing Handle, dead-letter write or commit. Zero means the
	// defaults.
	MinBackoff, MaxBackoff time.Duration
	// ShutdownGrace is how long the batch in hand may keep running after
	// Run's context is canceled before its context is canceled too. Zero
	// means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// ClientOpts are extra franz-go options (tuning, tests).
	ClientOpts []kgo.Opt
}

// Dead-letter headers, added to the original record's own headers.
const (
	DLQHeaderError     = "trawler-dlq-error"
	DLQHeaderTopic     = "trawler-dlq-topic"
	DLQHeaderPartition = "trawler-dlq-partition"
	DLQHeaderOffset    = "trawler-dlq-offset"
	DLQHeaderGroup     = "trawler-dlq-group"
)

// errShutdown marks work given up because Run's context ended; its records
// were not committed and will be redelivered.
var errShutdown = errors.New("shutting down")

// Consumer is an at-least-once group consumer: poll a batch, decode it
// (undecodable records to the dead-letter topic), hand it to Handle until
// Handle succeeds, commit, repeat. Rebalances wait while a batch is in hand,
// so a commit never lands on a partition this member no longer owns.
type Consumer[T any] struct {
	cfg     Config
	o       ConsumerOptions[T]
	log     *slog.Logger
	m       *consumerMetrics
	running atomic.Bool
}

// NewConsumer validates the options and builds the consumer; Run connects.
func NewConsumer[T any](cfg Config, o ConsumerOptions[T]) (*Consumer[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("kafka consumer %q: %w", o.Group, err)
	}
	o.MaxBatch = cmpOr(o.MaxBatch, DefaultMaxBatch)
	o.MinBackoff = cmpOr(o.MinBackoff, DefaultMinBackoff)
	o.MaxBackoff = max(cmpOr(o.MaxBackoff, DefaultMaxBackoff), o.MinBackoff)
	o.ShutdownGrace = cmpOr(o.ShutdownGrace, DefaultShutdownGrace)
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := newConsumerMetrics(o.Registerer, o.Group, o.Topics, o.DLQTopic != "")
	if err != nil {
		return nil, fmt.Errorf("kafka consumer %q metrics: %w", o.Group, err)
	}
	return &Consumer[T]{cfg: cfg, o: o, log: log.With("group", o.Group), m: m}, nil
}

// validate checks the required options.
func (o *ConsumerOptions[T]) validate() error {
	switch {
	case o.Group == "":
		return errors.New("no group")
	case len(o.Topics) == 0:
		return errors.New("no topics")
	case slices.Contains(o.Topics, ""):
		return errors.New("empty topic name")
	case o.DLQTopic != "" && slices.Contains(o.Topics, o.DLQTopic):
		return fmt.Errorf("dead-letter topic %q is also consumed", o.DLQTopic)
	case o.Decode == nil:
		return errors.New("no Decode function")
	case o.Handle == nil:
		return errors.New("no Handle function")
	case o.MaxBatch < 0:
		return fmt.Errorf("MaxBatch %d is negative", o.MaxBatch)
	}
	return nil
}

// cmpOr returns v, or def when v is zero.
func cmpOr[N int | time.Duration](v, def N) N {
	if v == 0 {
		return def
	}
	return v
}

// Run consumes until ctx is canceled. On cancel it finishes the batch in
// hand (within ShutdownGrace), commits it, leaves the group and returns nil.
// It returns an error only if the client cannot be built or was closed
// under it. Run may be called once.
func (c *Consumer[T]) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("kafka consumer: Run called twice")
	}
	cl, err := NewClient(c.cfg, c.clientOpts()...)
	if err != nil {
		return err
	}
	defer c.leave(cl)

	// work outlives ctx by the shutdown grace, so a batch in hand can
	// finish and be committed after cancel.
	work, stopWork := graceContext(ctx, c.o.ShutdownGrace)
	defer stopWork()

	c.log.Info("consumer started", "topics", c.o.Topics, "dlq", c.o.DLQTopic)
	for ctx.Err() == nil {
		fetches := cl.PollRecords(ctx, c.o.MaxBatch)
		if fetches.IsClientClosed() {
			return errors.New("kafka consumer: client closed")
		}
		c.logFetchErrors(ctx, fetches)
		if recs := fetches.Records(); len(recs) > 0 {
			c.processBatch(ctx, work, cl, recs)
		}
		cl.AllowRebalance()
	}
	return nil
}

// clientOpts are the group-consumer options on top of the shared ones.
func (c *Consumer[T]) clientOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.ConsumerGroup(c.o.Group),
		kgo.ConsumeTopics(c.o.Topics...),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		// A new group starts at the oldest record: nothing is skipped.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		WithSlog(c.log),
	}
	return append(opts, c.o.ClientOpts...)
}

// leave leaves the group and closes the client. The batch in hand has been
// committed (or deliberately not) by now.
func (c *Consumer[T]) leave(cl *kgo.Client) {
	cl.AllowRebalance()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.LeaveGroupContext(ctx); err != nil {
		c.log.Warn("leave group", "err", err)
	}
	cl.Close()
	c.log.Info("consumer stopped")
}

// logFetchErrors logs poll errors; franz-go retries them itself.
func (c *Consumer[T]) logFetchErrors(ctx context.Context, fetches kgo.Fetches) {
	fetches.EachError(func(topic string, partition int32, err error) {
		if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return
		}
		c.log.Warn("fetch error", "topic", topic, "partition", partition, "err", err)
	})
}

// processBatch decodes, dead-letters, handles and commits one batch.
// ctx is Run's context (stop retrying when it ends); work is the context the
// batch's operations run with.
func (c *Consumer[T]) processBatch(ctx, work context.Context, cl *kgo.Client, recs []*kgo.Record) {
	start := time.Now()
	items, poison := c.decode(recs)
	err := c.deadLetter(ctx, work, cl, poison)
	if err == nil && len(items) > 0 {
		err = c.handle(ctx, work, items)
	}
	if err == nil {
		err = c.commit(ctx, work, cl, recs)
	}
	c.m.batchSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		first, last := recs[0], recs[len(recs)-1]
		c.log.Warn("batch not committed; it will be redelivered", "records", len(recs),
			"first", position(first), "last", position(last), "err", err)
	}
}

// poisonRecord is a record Decode rejected.
type poisonRecord struct {
	rec *kgo.Record
	err error
}

// decode splits a batch into decoded items and poison records.
func (c *Consumer[T]) decode(recs []*kgo.Record) ([]Item[T], []poisonRecord) {
	items := make([]Item[T], 0, len(recs))
	var poison []poisonRecord
	for _, r := range recs {
		c.m.consumed.WithLabelValues(r.Topic).Inc()
		v, err := c.safeDecode(r)
		if err != nil {
			poison = append(poison, poisonRecord{rec: r, err: err})
			continue
		}
		items = append(items, Item[T]{Value: v, Record: r})
	}
	return items, poison
}

// safeDecode runs Decode, turning a panic into an error: bad input must not
// crash the service.
func (c *Consumer[T]) safeDecode(r *kgo.Record) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("decoder panic: %v", p)
		}
	}()
	return c.o.Decode(r)
}

// position formats a record's place for logs.
func position(r *kgo.Record) string {
	return fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset)
}
