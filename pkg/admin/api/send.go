package api

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/control"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// KafkaSender produces control commands to <crawl>.control with cl
// (pkg/control.Send: keyed by the target worker or "*", id and timestamp
// filled in).
func KafkaSender(cl *kgo.Client, crawl string) SendFunc {
	return func(ctx context.Context, c messages.Control) (string, error) {
		return control.Send(ctx, cl, crawl, c)
	}
}

// RedisAcks reads the workers' acknowledgements of crawl's commands.
func RedisAcks(rdb redis.UniversalClient, crawl string) AckFunc {
	return func(ctx context.Context, id string) (*Ack, error) {
		a, err := control.Ack(ctx, rdb, crawl, id)
		if errors.Is(err, control.ErrNoAck) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return &Ack{ID: a.ID, Command: a.Command, By: a.By, AppliedAt: a.AppliedAt, Worker: a.Worker, Result: a.Result,
			Error: a.Error, Results: a.Results}, nil
	}
}

// Ack is the body of GET /api/v1/control/<id>: what the workers recorded
// about a command.
type Ack struct {
	ID        string            `json:"id"`
	Command   string            `json:"command"`
	By        string            `json:"by,omitempty"`
	AppliedAt time.Time         `json:"applied_at"`
	Worker    string            `json:"worker"`
	Result    string            `json:"result"`
	Error     string            `json:"error,omitempty"`
	Results   map[string]string `json:"results,omitempty"`
}
