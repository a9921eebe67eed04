package control

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// PausedSources is a worker's view of the paused targets (source tags) of
// its frontier, read at claim time. It reads Redis at most once per
// maxAge, so the claim path pays one SMEMBERS a second at most however
// many batches it claims; a pause reaches every worker within maxAge plus
// a claim.
type PausedSources struct {
	rdb    redis.UniversalClient
	key    string
	maxAge time.Duration

	mu   sync.Mutex
	at   time.Time
	set  map[string]struct{}
	fail time.Time // last read error, so a Redis outage is not hammered
}

// NewPausedSources reads the paused set of the frontier with key prefix
// frontierPrefix, cached for maxAge (1 s when 0).
func NewPausedSources(rdb redis.UniversalClient, frontierPrefix string, maxAge time.Duration) *PausedSources {
	if maxAge <= 0 {
		maxAge = time.Second
	}
	return &PausedSources{rdb: rdb, key: PausedSourcesKey(frontierPrefix), maxAge: maxAge}
}

// Get returns the paused source tags (nil when none). On a read error it
// keeps the last set it read and returns the error with it.
func (p *PausedSources) Get(ctx context.Context) (map[string]struct{}, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.at) < p.maxAge || now.Sub(p.fail) < p.maxAge {
		return p.set, nil
	}
	members, err := p.rdb.SMembers(ctx, p.key).Result()
	if err != nil {
		p.fail = now
		return p.set, fmt.Errorf("read paused targets: %w", err)
	}
	p.at = now
	if len(members) == 0 {
		p.set = nil
		return nil, nil
	}
	set := make(map[string]struct{}, len(members))
	for _, m := range members {
		set[m] = struct{}{}
	}
	p.set = set
	return set, nil
}
