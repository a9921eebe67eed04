package control

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Topic is the control topic of a crawl (ARCHITECTURE.md section 3).
func Topic(crawl string) string { return crawl + ".control" }

// NewID returns a fresh command id: the time (so ids sort roughly by when
// they were issued, which helps an operator reading acks) and 48 random
// bits (so two operators issuing commands in the same millisecond differ).
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return fmt.Sprintf("%s-%s", time.Now().UTC().Format("20060102T150405.000"), hex.EncodeToString(b[:]))
}

// Send validates c, fills in what the sender may leave out (the id, the
// timestamp) and produces it to crawl's control topic, keyed by c.Target
// (a worker id) or "*" for every worker. It waits for the broker's
// acknowledgement and returns the command id, under which the workers'
// acknowledgement can be read with Ack.
func Send(ctx context.Context, cl *kgo.Client, crawl string, c messages.Control) (string, error) {
	if crawl == "" {
		return "", fmt.Errorf("send control command: empty crawl name")
	}
	if c.ID == "" {
		c.ID = NewID()
	}
	if c.Timestamp == "" {
		c.Timestamp = messages.FormatTimestamp(time.Now())
	}
	if err := c.Validate(); err != nil {
		return "", fmt.Errorf("send control command: %w", err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("send control command %s: encode: %w", c.ID, err)
	}
	key := c.Target
	if key == "" {
		key = AllWorkers
	}
	r := &kgo.Record{Topic: Topic(crawl), Key: []byte(key), Value: b}
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		return "", fmt.Errorf("send control command %s to %s: %w", c.ID, r.Topic, err)
	}
	return c.ID, nil
}

// AllWorkers is the record key (and Control.Target) of a command every
// worker acts on.
const AllWorkers = "*"
