package kafka

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// snappyCodec is the record-batch compression attribute for snappy.
const snappyCodec = 2

func TestProduceSync(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	cfg := newCluster(t, 16, "fc.tocrawl.npld")
	cl := newTestClient(t, cfg)

	// Host keys from ARCHITECTURE.md 3; each must land where Kafka's Java
	// partitioner (murmur2) puts it.
	keys := []string{"cf7cc746", "f0dd8424", "77256b24", "61642781"}
	for _, k := range keys {
		// Compressible values: franz-go sends a batch uncompressed when
		// compression would not make it smaller.
		v := `{"url":"http://` + k + `/` + strings.Repeat("a", 500) + `"}`
		if err := Produce(ctx, cl, "fc.tocrawl.npld", k, []byte(v)); err != nil {
			t.Fatalf("Produce: %v", err)
		}
	}
	keyless := strings.Repeat("keyless ", 100)
	if err := Produce(ctx, cl, "fc.tocrawl.npld", "", []byte(keyless)); err != nil {
		t.Fatalf("Produce without key: %v", err)
	}
	javaCompatible := kgo.StickyKeyPartitioner(nil).ForTopic("fc.tocrawl.npld")
	recs := readAll(t, ctx, cfg, "fc.tocrawl.npld")
	if len(recs) != len(keys)+1 {
		t.Fatalf("read %d records, want %d", len(recs), len(keys)+1)
	}
	for _, r := range recs {
		if got := r.Attrs.CompressionType(); got != snappyCodec {
			t.Errorf("record %s compressed with codec %d, want snappy", r.Key, got)
		}
		if r.Key == nil {
			if string(r.Value) != keyless {
				t.Errorf("keyless record has value %q", r.Value)
			}
			continue
		}
		if want := int32(javaCompatible.Partition(r, 16)); r.Partition != want {
			t.Errorf("key %s on partition %d, Kafka's murmur2 says %d", r.Key, r.Partition, want)
		}
	}

	err := Produce(ctx, cl, "no.such.topic", "k", []byte("v"))
	if err == nil || !strings.Contains(err.Error(), "no.such.topic") {
		t.Errorf("Produce to a missing topic = %v, want an error naming it", err)
	}
}

func TestProducerAsync(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	cfg := newCluster(t, 4, "fc.crawled")
	// A missing topic must fail fast, not after the default retries.
	p := NewProducer(newTestClient(t, cfg, kgo.UnknownTopicRetries(1)))

	for i := range 100 {
		p.ProduceAsync(ctx, "fc.crawled", fmt.Sprintf("host-%d", i%10), []byte(fmt.Sprint(i)))
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if n := len(readAll(t, ctx, cfg, "fc.crawled")); n != 100 {
		t.Fatalf("read %d records, want 100", n)
	}

	// Failures are kept until Flush, counted exactly, and then reset.
	for i := range 12 {
		p.ProduceAsync(ctx, "missing.topic", "k", []byte(fmt.Sprint(i)))
	}
	p.ProduceRecordAsync(ctx, &kgo.Record{Topic: "fc.crawled", Value: []byte("ok")})
	err := p.Flush(ctx)
	var pe *ProduceError
	if !errors.As(err, &pe) {
		t.Fatalf("Flush = %v, want *ProduceError", err)
	}
	if pe.Failed != 12 || len(pe.Samples) != maxErrorSamples {
		t.Errorf("Failed = %d with %d samples, want 12 and %d", pe.Failed, len(pe.Samples), maxErrorSamples)
	}
	if !strings.Contains(err.Error(), "12 records failed") || !strings.Contains(err.Error(), "missing.topic") {
		t.Errorf("error text %q", err)
	}
	if len(pe.Unwrap()) != len(pe.Samples) {
		t.Error("Unwrap does not expose the samples")
	}
	if err := p.Flush(ctx); err != nil {
		t.Errorf("second Flush = %v, want nil after reset", err)
	}
	if n := len(readAll(t, ctx, cfg, "fc.crawled")); n != 101 {
		t.Errorf("read %d records, want 101", n)
	}
}
