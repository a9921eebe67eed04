package statebackup

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Masters are the servers a backup snapshots: the one server of a plain
// client, or every master of a Redis Cluster (a frontier shard, the
// recently-crawled DB's 64 hash-tag shards and the ledger live on whichever
// masters own their slots, so every master is needed).
func Masters(ctx context.Context, rdb redis.UniversalClient) ([]string, error) {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		c, ok := rdb.(*redis.Client)
		if !ok {
			return nil, fmt.Errorf("backup: unsupported Redis client %T", rdb)
		}
		return []string{c.Options().Addr}, nil
	}
	var mu sync.Mutex
	var addrs []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		addrs = append(addrs, c.Options().Addr)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("backup: list the cluster's masters: %w", err)
	}
	sort.Strings(addrs)
	return addrs, nil
}
