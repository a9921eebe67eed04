package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/redisconf"
)

// logServerConfig warns, once at start, about redis-server settings that
// differ from what the frontier's memory figures assume: a Redis run
// without them works, in about half as much memory again per queued URI.
func logServerConfig(rdb redis.UniversalClient, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	diffs, err := redisconf.Check(ctx, rdb)
	if err != nil {
		log.Debug("redis settings not checked", "err", err)
	}
	for _, d := range diffs {
		log.Warn("redis setting", "setting", d)
	}
}
