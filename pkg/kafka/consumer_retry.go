package kafka

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// maxCommitAttempts bounds commit retries: a commit that keeps failing
// usually means the member lost its partitions, and the new owner will
// redeliver the batch anyway.
const maxCommitAttempts = 5

// deadLetter writes poison records to the DLQ topic (or logs and drops them
// when there is none), retrying until it succeeds or ctx ends.
func (c *Consumer[T]) deadLetter(ctx, work context.Context, cl *kgo.Client, poison []poisonRecord) error {
	if len(poison) == 0 {
		return nil
	}
	if c.o.DLQTopic == "" {
		for _, p := range poison {
			c.m.dropped.WithLabelValues(p.rec.Topic).Inc()
			c.log.Error("undecodable record skipped (no dead-letter topic)", "position", position(p.rec), "err", p.err)
		}
		return nil
	}
	dlq := make([]*kgo.Record, len(poison))
	for i, p := range poison {
		dlq[i] = c.dlqRecord(p)
	}
	err := c.retry(ctx, "write dead-letter records", -1, func() error {
		return cl.ProduceSync(work, dlq...).FirstErr()
	})
	if err != nil {
		return err
	}
	for _, p := range poison {
		c.m.deadLettered.WithLabelValues(p.rec.Topic).Inc()
		c.log.Warn("undecodable record sent to dead-letter topic", "position", position(p.rec),
			"dlq", c.o.DLQTopic, "err", p.err)
	}
	return nil
}

// dlqRecord copies a poison record for the DLQ topic.
func (c *Consumer[T]) dlqRecord(p poisonRecord) *kgo.Record {
	return DLQRecord(c.o.DLQTopic, c.o.Group, p.rec, p.err)
}

// DLQRecord copies a record that cannot be processed for the DLQ topic:
// same key and value (ARCHITECTURE.md 3: keyed by the original key),
// original headers, plus headers saying why and where from. Consumers that
// reject a record after decoding it (a launch with an unusable URL) use it
// too, so every DLQ record reads the same.
func DLQRecord(dlqTopic, group string, r *kgo.Record, cause error) *kgo.Record {
	headers := make([]kgo.RecordHeader, 0, len(r.Headers)+5)
	headers = append(headers, r.Headers...)
	headers = append(headers,
		kgo.RecordHeader{Key: DLQHeaderError, Value: []byte(cause.Error())},
		kgo.RecordHeader{Key: DLQHeaderTopic, Value: []byte(r.Topic)},
		kgo.RecordHeader{Key: DLQHeaderPartition, Value: []byte(strconv.Itoa(int(r.Partition)))},
		kgo.RecordHeader{Key: DLQHeaderOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
		kgo.RecordHeader{Key: DLQHeaderGroup, Value: []byte(group)},
	)
	return &kgo.Record{Topic: dlqTopic, Key: r.Key, Value: r.Value, Headers: headers}
}

// handle calls Handle until it succeeds or ctx ends. The records are never
// skipped: a batch that cannot be handled stays uncommitted.
func (c *Consumer[T]) handle(ctx, work context.Context, items []Item[T]) error {
	return c.retry(ctx, "handle batch", -1, func() error {
		err := c.o.Handle(work, items)
		if err != nil {
			c.m.handleErrors.Inc()
		}
		return err
	})
}

// commit commits the highest offset of every partition in the batch,
// dead-lettered records included.
func (c *Consumer[T]) commit(ctx, work context.Context, cl *kgo.Client, recs []*kgo.Record) error {
	return c.retry(ctx, "commit offsets", maxCommitAttempts, func() error {
		err := cl.CommitRecords(work, recs...)
		if err != nil {
			c.m.commitErrors.Inc()
		}
		return err
	})
}

// retry runs op until it succeeds, attempts (if positive) are used up, or
// ctx ends, waiting a doubling backoff between attempts. After ctx ends an
// attempt already under way still completes (it runs with the work
// context), but no new one starts.
func (c *Consumer[T]) retry(ctx context.Context, what string, attempts int, op func() error) error {
	delay := c.o.MinBackoff
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil {
			return nil
		}
		if attempts > 0 && attempt >= attempts {
			return fmt.Errorf("%s: giving up after %d attempts: %w", what, attempt, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w after %d attempts: %w", what, errShutdown, attempt, err)
		}
		c.log.Warn(what+" failed; retrying", "attempt", attempt, "backoff", delay, "err", err)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w after %d attempts: %w", what, errShutdown, attempt, err)
		}
		delay = min(2*delay, c.o.MaxBackoff)
	}
}

// graceContext returns a context that is not canceled with parent but
// grace after it, and a stop function that cancels it and releases its
// goroutine.
func graceContext(parent context.Context, grace time.Duration) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-done:
			return
		case <-parent.Done():
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			cancel()
		}
	}()
	return ctx, func() {
		close(done)
		<-exited
		cancel()
	}
}
