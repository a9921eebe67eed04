package launcher

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Producer writes one record to Kafka. Produce must return only once the
// record is acknowledged (or has failed), so that a run's summary and its
// launch records are true. Implementations must be safe for use by one
// goroutine at a time.
type Producer interface {
	Produce(ctx context.Context, topic, key string, value []byte) error
}

// Record is one message for a BatchProducer.
type Record struct {
	Topic string
	Key   string
	Value []byte
}

// BatchProducer is an optional interface of a Producer: when the Producer
// has it, launches are sent a batch at a time, which is what makes a large
// hour fast. errs[i] is the outcome of recs[i]; the call returns once every
// record is acknowledged or failed.
type BatchProducer interface {
	ProduceBatch(ctx context.Context, recs []Record) (errs []error)
}

// KafkaProducer produces through a franz-go client, with the client's
// partitioner (Kafka's murmur2 of the key), and implements BatchProducer.
type KafkaProducer struct {
	cl *kgo.Client
}

// NewKafkaProducer returns a Producer writing through cl.
func NewKafkaProducer(cl *kgo.Client) *KafkaProducer { return &KafkaProducer{cl: cl} }

// Produce implements Producer.
func (p *KafkaProducer) Produce(ctx context.Context, topic, key string, value []byte) error {
	errs := p.ProduceBatch(ctx, []Record{{Topic: topic, Key: key, Value: value}})
	return errs[0]
}

// ProduceBatch implements BatchProducer.
func (p *KafkaProducer) ProduceBatch(ctx context.Context, recs []Record) []error {
	krecs := make([]*kgo.Record, len(recs))
	index := make(map[*kgo.Record]int, len(recs))
	for i, r := range recs {
		krecs[i] = &kgo.Record{Topic: r.Topic, Value: r.Value}
		if r.Key != "" {
			krecs[i].Key = []byte(r.Key)
		}
		index[krecs[i]] = i
	}
	// ProduceSync answers in the order the promises ran, not the order of
	// its arguments: match results to records by identity.
	errs := make([]error, len(recs))
	for _, res := range p.cl.ProduceSync(ctx, krecs...) {
		if res.Err != nil {
			i := index[res.Record]
			errs[i] = fmt.Errorf("produce to %s (key %q): %w", recs[i].Topic, recs[i].Key, res.Err)
		}
	}
	return errs
}

// produceAll sends recs through p, a batch at a time when p can.
func produceAll(ctx context.Context, p Producer, recs []Record) []error {
	if bp, ok := p.(BatchProducer); ok {
		return bp.ProduceBatch(ctx, recs)
	}
	errs := make([]error, len(recs))
	for i, r := range recs {
		errs[i] = p.Produce(ctx, r.Topic, r.Key, r.Value)
		if errs[i] != nil {
			// The broker is refusing: stop, and report the rest as not sent.
			for j := i + 1; j < len(recs); j++ {
				errs[j] = fmt.Errorf("not sent: an earlier launch failed: %w", errs[i])
			}
			break
		}
	}
	return errs
}
