package control

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// A terminate of a crawl or stream is also kept in Redis until a resume
// (or a new launch of the crawl) clears it: a worker that is restarted
// after the terminate, as Kubernetes restarts a pod whose process ended,
// must stay idle rather than crawl again.

// TerminatedKey holds the id of the terminate command in force for a
// frontier (under its key prefix, its hash tag); absent when none is.
func TerminatedKey(frontierPrefix string) string { return frontierPrefix + "control:terminated" }

// MarkTerminated records that command id terminated the frontier.
func MarkTerminated(ctx context.Context, rdb redis.UniversalClient, frontierPrefix, id string) error {
	if err := rdb.Set(ctx, TerminatedKey(frontierPrefix), id, 0).Err(); err != nil {
		return fmt.Errorf("record terminate %s: %w", id, err)
	}
	return nil
}

// ClearTerminated lifts a recorded terminate (a resume, a new launch).
func ClearTerminated(ctx context.Context, rdb redis.UniversalClient, frontierPrefix string) error {
	if err := rdb.Del(ctx, TerminatedKey(frontierPrefix)).Err(); err != nil {
		return fmt.Errorf("clear terminate: %w", err)
	}
	return nil
}

// Terminated returns the id of the terminate in force for the frontier;
// ok is false when there is none.
func Terminated(ctx context.Context, rdb redis.UniversalClient, frontierPrefix string) (id string, ok bool, err error) {
	id, err = rdb.Get(ctx, TerminatedKey(frontierPrefix)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("read terminate: %w", err)
	}
	return id, true, nil
}
