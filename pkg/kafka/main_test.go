package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newCluster starts a one-broker kfake cluster without auto topic creation,
// with the given topics of the given partition count.
func newCluster(t *testing.T, partitions int32, topics ...string) Config {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1)}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(partitions, topics...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return Config{Brokers: c.ListenAddrs(), ClientID: "trawler-test"}
}

// newTestClient returns a client on cfg closed at cleanup.
func newTestClient(t *testing.T, cfg Config, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := NewClient(cfg, opts...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// testContext returns a context canceled at cleanup or after d.
func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// readAll consumes every record of topic from the start up to its current
// end offsets.
func readAll(t *testing.T, ctx context.Context, cfg Config, topic string) []*kgo.Record {
	t.Helper()
	cl := newTestClient(t, cfg, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("list end offsets of %s: %v", topic, err)
	}
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	var recs []*kgo.Record
	for int64(len(recs)) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: got %d of %d records: %v", topic, len(recs), want, ctx.Err())
		}
		fs.EachError(func(tp string, p int32, err error) { t.Errorf("fetch %s/%d: %v", tp, p, err) })
		recs = append(recs, fs.Records()...)
	}
	return recs
}
