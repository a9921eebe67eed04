package redisconn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterRetries is how often a cluster client retries a command that
// met a moving or restarting master.
const clusterRetries = 8

// OpenUniversal is Open for callers that take a redis.UniversalClient:
// a *redis.ClusterClient when cfg names a cluster (-redis-cluster, or
// several addresses), else Open's *redis.Client. For a cluster it waits
// until every given node answers and reports cluster_state:ok, so a role
// does not start into CLUSTERDOWN errors while the cluster forms or a
// restarted master loads its append-only file.
func OpenUniversal(ctx context.Context, cfg Config, opts ...OpenOption) (redis.UniversalClient, error) {
	if !cfg.IsCluster() {
		return Open(ctx, cfg, opts...)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := newWaiting(ctx, opts)
	for _, a := range cfg.Addrs() {
		if err := w.ready(ctx, redis.Options{Addr: a, Password: cfg.Password}, clusterOK); err != nil {
			return nil, fmt.Errorf("redis cluster node %s: %w", a, err)
		}
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cfg.Addrs(), Password: cfg.Password,
		// A restarted master refuses connections, then answers LOADING
		// while it replays its append-only file and CLUSTERDOWN until it
		// has rejoined: about two seconds for a small data set.
		// go-redis retries all three; with its defaults (3 retries, at
		// most 512 ms apart) it gives up after about a second and a
		// worker's completion fails, so the URI is crawled again. These
		// retries ride out about five seconds.
		MaxRetries: clusterRetries, MinRetryBackoff: 50 * time.Millisecond, MaxRetryBackoff: time.Second})
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis cluster %s: ping: %w", cfg.Addr, err)
	}
	return c, nil
}

// errClusterForming is a node that answers but whose cluster is not
// serving every slot yet; waiting.ready retries it.
type errClusterForming struct{ state string }

func (e errClusterForming) Error() string { return "cluster_state:" + e.state }

// clusterOK checks a node's view of its cluster.
func clusterOK(ctx context.Context, c *redis.Client) error {
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil {
		return err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "cluster_state:"); ok {
			if v == "ok" {
				return nil
			}
			return errClusterForming{v}
		}
	}
	return errClusterForming{"unknown"}
}
