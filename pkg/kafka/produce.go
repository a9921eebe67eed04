package kafka

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Produce writes one record and waits until the broker has acknowledged it.
// An empty key produces a record without a key (spread over partitions).
func Produce(ctx context.Context, cl *kgo.Client, topic, key string, value []byte) error {
	r := &kgo.Record{Topic: topic, Key: keyBytes(key), Value: value}
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("produce to %s (key %q): %w", topic, key, err)
	}
	return nil
}

// keyBytes maps the empty key to no key.
func keyBytes(key string) []byte {
	if key == "" {
		return nil
	}
	return []byte(key)
}

// maxErrorSamples bounds the errors a Producer keeps between flushes; the
// count is always exact.
const maxErrorSamples = 8

// Producer produces asynchronously for hot paths and collects every failure
// until the next Flush, so none is lost. It is safe for concurrent use.
//
// Flush waits for everything the underlying client has buffered, including
// records produced through the client by other code.
type Producer struct {
	cl *kgo.Client

	mu      sync.Mutex
	failed  int64
	samples []error
}

// NewProducer returns a Producer writing through cl.
func NewProducer(cl *kgo.Client) *Producer {
	return &Producer{cl: cl}
}

// ProduceAsync buffers one record and returns at once (unless the client's
// buffer is full, when it waits for room or ctx). A failure is reported by
// the next Flush.
func (p *Producer) ProduceAsync(ctx context.Context, topic, key string, value []byte) {
	p.ProduceRecordAsync(ctx, &kgo.Record{Topic: topic, Key: keyBytes(key), Value: value})
}

// ProduceRecordAsync is ProduceAsync for a prepared record (headers,
// timestamp).
func (p *Producer) ProduceRecordAsync(ctx context.Context, r *kgo.Record) {
	p.cl.Produce(ctx, r, p.record)
}

// record is the produce promise: it keeps the failure for Flush.
func (p *Producer) record(r *kgo.Record, err error) {
	if err == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failed++
	if len(p.samples) < maxErrorSamples {
		p.samples = append(p.samples, fmt.Errorf("produce to %s (key %q): %w", r.Topic, r.Key, err))
	}
}

// Flush waits until every buffered record is acknowledged or failed, then
// returns a *ProduceError describing the failures since the previous Flush
// (nil if none), and resets the count. If ctx ends first it returns the
// context's error and keeps the failures for the next Flush.
func (p *Producer) Flush(ctx context.Context) error {
	if err := p.cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush producer: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed == 0 {
		return nil
	}
	err := &ProduceError{Failed: p.failed, Samples: p.samples}
	p.failed, p.samples = 0, nil
	return err
}

// ProduceError reports asynchronous produce failures.
type ProduceError struct {
	// Failed is how many records failed.
	Failed int64
	// Samples are the first failures (at most 8), each naming its topic
	// and key.
	Samples []error
}

// Error implements error.
func (e *ProduceError) Error() string {
	msgs := make([]string, len(e.Samples))
	for i, s := range e.Samples {
		msgs[i] = s.Error()
	}
	return fmt.Sprintf("%d records failed to produce: %s", e.Failed, strings.Join(msgs, "; "))
}

// Unwrap lets errors.Is and errors.As see the sampled causes.
func (e *ProduceError) Unwrap() []error { return e.Samples }
