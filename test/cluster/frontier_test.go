package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/services/worker"
)

// shardsPerMaster maps each master's address to the number of frontier
// shards whose hash slot (CLUSTER KEYSLOT) it serves.
func shardsPerMaster(t *testing.T, cc *redis.ClusterClient) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	for i := range clusterShards {
		key := fmt.Sprintf("{fc-npld:%d}:ready", i)
		slot, err := cc.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatalf("CLUSTER KEYSLOT %s: %v", key, err)
		}
		m, err := cc.MasterForKey(ctx, key)
		if err != nil {
			t.Fatalf("master of %s (slot %d): %v", key, slot, err)
		}
		out[m.Options().Addr]++
	}
	return out
}

// checkFrontierSpread asks every master for its frontier keys after the
// crawl (host state, totals, URI indexes stay): each must hold some, and
// a frontier opened with another shard count than the recorded one is
// refused.
func checkFrontierSpread(t *testing.T, cc *redis.ClusterClient) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex // ForEachMaster calls in parallel
	keys := map[string]int{}
	err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, "{fc-npld:*}:*", 1000).Iterator()
		n := 0
		for iter.Next(ctx) {
			n++
		}
		mu.Lock()
		defer mu.Unlock()
		keys[c.Options().Addr] = n
		return iter.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("frontier keys per master after the crawl: %v", keys)
	if len(keys) != 3 {
		t.Fatalf("frontier keys on %d masters, want 3: %v", len(keys), keys)
	}
	for addr, n := range keys {
		if n == 0 {
			t.Errorf("master %s holds no frontier key", addr)
		}
	}
	if got := cc.HGet(ctx, frontier.LayoutKey("fc-npld"), "shards").Val(); got != fmt.Sprint(clusterShards) {
		t.Errorf("recorded shard count %q, want %d", got, clusterShards)
	}
	p := crawlProfile()
	p.Frontier.Shards = 1
	one, err := worker.NewFrontier(cc, workerConfig("", "x"), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := one.CheckLayout(ctx); !errors.Is(err, frontier.ErrLayout) {
		t.Errorf("frontier opened with 1 shard on a 12-shard frontier: %v, want ErrLayout", err)
	}
}

// whereMissing says, for URLs never captured, whether the inscope
// journal has them (a worker admitted them) and what the frontier knows.
func whereMissing(t *testing.T, kc kafka.Config, cl *kgo.Client, front *frontier.Frontier, missing []string) string {
	t.Helper()
	journaled := map[string]bool{}
	for _, r := range readTopic(t, kc, cl, "fc.inscope.npld") {
		var l messages.Launch
		if json.Unmarshal(r.Value, &l) == nil {
			journaled[l.URL] = true
		}
	}
	// A host's robots.txt names its sitemaps: how it was reached.
	robotsVia := map[string]string{}
	for _, r := range readTopic(t, kc, cl, "fc.crawled") {
		if ev, err := messages.DecodeCrawled(r.Value); err == nil && strings.HasSuffix(ev.URL, "/robots.txt") {
			robotsVia[ev.URL] = fmt.Sprintf("status %d hops %q via %s", ev.StatusCode, ev.HopPath, ev.Via)
		}
	}
	var b strings.Builder
	for _, u := range missing {
		st, err := front.URIState(context.Background(), u)
		fmt.Fprintf(&b, "%s: journaled %t, frontier state %s %v", u, journaled[u], st.State, err)
		if i := strings.Index(u[len("http://"):], "/"); i > 0 {
			robots := u[:len("http://")+i] + "/robots.txt"
			fmt.Fprintf(&b, "; %s: %s", robots, robotsVia[robots])
		}
		b.WriteString("\n")
	}
	return b.String()
}
