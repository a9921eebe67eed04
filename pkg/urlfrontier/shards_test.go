package urlfrontier

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

// A sharded frontier (hosts spread over hash tags) serves the same way:
// queues, dumps, completion by URL and the drop of a crawl reach every
// shard.
func TestShardedCrawl(t *testing.T) {
	e := newEnvWith(t, frontier.Options{Shards: 3})
	var all []*pb.URLItem
	for h := range 6 {
		all = append(all, discovered(fmt.Sprintf("https://h%d.example/1", h), "S"), discovered(fmt.Sprintf("https://h%d.example/2", h), "S"))
	}
	e.mustPut(pb.AckMessage_OK, all...)
	ql, err := e.c.ListQueues(e.ctx, &pb.Pagination{CrawlID: "S"})
	if err != nil || ql.GetTotal() != 6 {
		t.Fatalf("queues %v, %v", ql, err)
	}
	crawl := &pb.GetParams_CrawlID{CrawlID: "S"}
	got := e.get(&pb.GetParams{Item: crawl, MaxUrlsPerQueue: 1})
	if len(got) != 6 {
		t.Fatalf("served %v: want one URL of each of 6 queues", got)
	}
	for _, u := range got {
		e.mustPut(pb.AckMessage_OK, known(u, "S", time.Time{}))
	}
	if n, err := e.c.CountURLs(e.ctx, &pb.CountUrlParams{CrawlID: "S"}); err != nil || n.GetValue() != 6 {
		t.Fatalf("count %v, %v", n, err)
	}
	if n, err := e.c.DeleteCrawl(e.ctx, &pb.DeleteCrawlMessage{Value: "S"}); err != nil || n.GetValue() != 6 {
		t.Fatalf("DeleteCrawl: %v, %v", n, err)
	}
	keys, err := e.rdb.Keys(e.ctx, "{uf+S*").Result()
	if err != nil || len(keys) != 0 {
		t.Fatalf("keys left: %v %v", keys, err)
	}
}

// Clients asking at once never get the same URL under two leases.
func TestConcurrentGetURLs(t *testing.T) {
	e := newEnv(t)
	var items []*pb.URLItem
	for h := range 10 {
		for p := range 5 {
			items = append(items, discovered(fmt.Sprintf("https://h%d.example/%d", h, p), ""))
		}
	}
	e.mustPut(pb.AckMessage_OK, items...)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				urls, err := e.tryGet(&pb.GetParams{MaxQueues: 3, MaxUrlsPerQueue: 2})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, u := range urls {
					seen[u]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for u, n := range seen {
		if n > 1 {
			t.Errorf("%s served %d times under live leases", u, n)
		}
	}
	if len(seen) == 0 {
		t.Fatal("nothing served")
	}
}
