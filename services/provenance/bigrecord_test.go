package provenance

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/kafka"
)

// A launch's statistics record of many domains (2 MiB: some 5,800 at
// about 360 bytes each) goes through on the harveststats topic as the
// shipped topic definitions set it up; the same record on a topic left at
// Kafka's default is refused, which is what kept such launches unsealed.
func TestLargeStatisticsRecord(t *testing.T) {
	kc, _ := embeddedtest.Kafka(t, 1)
	cl, err := kafka.NewClient(kc, producerOpts(slog.New(slog.DiscardHandler))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx := context.Background()
	// Domain names that do not compress away (the topics use snappy, and
	// the broker's limit is on the compressed batch).
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString(`{"domains":[`)
	name := make([]byte, 48)
	for b.Len() < 2<<20+1 {
		for i := range name {
			name[i] = byte(rng.Uint32())
		}
		fmt.Fprintf(&b, `{"domain":"%s.example","urls":%d},`, base64.RawURLEncoding.EncodeToString(name), rng.IntN(1000))
	}
	b.WriteString(`{}]}`)
	big := []byte(b.String())
	if len(big) < 2<<20 {
		t.Fatalf("record of %d bytes, want over 2 MiB", len(big))
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fc.harveststats", Key: []byte("k"), Value: big}).FirstErr(); err != nil {
		t.Fatalf("statistics record of %d bytes: %v", len(big), err)
	}
	err = cl.ProduceSync(ctx, &kgo.Record{Topic: "fc.warcs", Key: []byte("k"), Value: big}).FirstErr()
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("the same record on a topic at Kafka's default: %v, want MESSAGE_TOO_LARGE", err)
	}
}
