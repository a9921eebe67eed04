package urlfrontier

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

// noCap stands for "no limit" (0) in max_queues and max_urls_per_queue:
// one call hands out at most this many queues, and URLs of a queue.
const noCap = 1000

// GetURLs leases due URLs: one claim of up to max_queues ready queues
// (oldest-ready first), then up to max_urls_per_queue of each. A queue
// whose URLs are out serves nothing more until they are all completed (or
// their leases, delay_requestable seconds, expire) and then its delay has
// passed: Trawler's politeness, one fetch at a time per host.
func (s *Server) GetURLs(req *pb.GetParams, stream pb.URLFrontier_GetURLsServer) error {
	ctx := stream.Context()
	if !s.active.Load() {
		return nil
	}
	var crawls []*crawl
	if req.GetAnyCrawlID() != nil {
		ids, err := s.crawlIDs(ctx)
		if err != nil {
			return err
		}
		for _, id := range ids {
			c, err := s.crawl(ctx, id, false)
			if err != nil {
				return err
			}
			crawls = append(crawls, c)
		}
	} else {
		c, err := s.getCrawl(ctx, req.GetCrawlID())
		if err != nil || c == nil {
			return err
		}
		crawls = append(crawls, c)
	}
	lease := DefaultLease
	if d := req.GetDelayRequestable(); d > 0 {
		lease = time.Duration(d) * time.Second
	}
	queues, perQueue := capOf(req.GetMaxQueues()), capOf(req.GetMaxUrlsPerQueue())
	for _, c := range crawls {
		n, err := c.serve(ctx, stream, req.GetKey(), queues, perQueue, lease)
		if err != nil {
			return err
		}
		if queues -= n; queues <= 0 {
			return nil
		}
	}
	return nil
}

func capOf(n uint32) int {
	if n == 0 || n > noCap {
		return noCap
	}
	return int(n)
}

// getCrawl opens a crawl a read names: the default crawl is always there
// (empty until something is put); another unknown id is a client's
// mistake, answered InvalidArgument. It returns nil for an empty default.
func (s *Server) getCrawl(ctx context.Context, rawID string) (*crawl, error) {
	id, err := crawlID(rawID)
	if err != nil {
		return nil, err
	}
	c, err := s.crawl(ctx, id, false)
	if status.Code(err) == codes.NotFound {
		if id == DefaultCrawl {
			return nil, nil
		}
		return nil, status.Errorf(codes.InvalidArgument, "crawl %q is unknown (ListCrawls names the crawls)", id)
	}
	return c, err
}

// serve hands out one crawl's due URLs; it returns how many queues
// served.
func (c *crawl) serve(ctx context.Context, stream pb.URLFrontier_GetURLsServer, key string, queues, perQueue int, lease time.Duration) (int, error) {
	if _, err := c.f.Reap(ctx); err != nil {
		return 0, unavailable("reap", err)
	}
	if err := c.promote(ctx); err != nil {
		return 0, unavailable("queue scheduled URLs", err)
	}
	byHost := map[string][]*frontier.Claim{}
	var hosts []string
	if key != "" {
		got, err := c.f.TakeNext(ctx, key, perQueue, lease)
		if err != nil {
			return 0, unavailable("take", err)
		}
		if len(got) > 0 {
			hosts, byHost[key] = []string{key}, got
		}
	} else {
		claims, _, err := c.f.Claim(ctx, queues, lease)
		if err != nil {
			return 0, unavailable("claim", err)
		}
		for _, cl := range claims {
			more, err := c.f.TakeMore(ctx, cl.Host, perQueue-1, lease)
			if err != nil {
				return 0, unavailable("take", err)
			}
			hosts = append(hosts, cl.Host)
			byHost[cl.Host] = append([]*frontier.Claim{cl}, more...)
		}
	}
	served := 0
	for _, h := range hosts {
		cls, err := c.withinLimit(ctx, h, byHost[h])
		if err != nil {
			return served, err
		}
		if len(cls) > 0 {
			served++
		}
		for _, cl := range cls {
			if err := stream.Send(c.urlInfo(cl.Launch, cl.Host)); err != nil {
				return served, err
			}
			c.s.m.serve(1)
		}
	}
	return served, nil
}

// withinLimit keeps the claims a queue's crawl limit allows and returns
// the rest to the queue, which it then blocks.
func (c *crawl) withinLimit(ctx context.Context, host string, cls []*frontier.Claim) ([]*frontier.Claim, error) {
	limit, err := c.s.rdb.HGet(ctx, c.key("limit"), host).Int64()
	if errors.Is(err, redis.Nil) || limit == 0 {
		return cls, nil
	}
	if err != nil {
		return nil, unavailable("limit", err)
	}
	done, err := c.s.rdb.HGet(ctx, c.key("done"), host).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, unavailable("limit", err)
	}
	keep := int(max(0, min(limit-done, int64(len(cls)))))
	if keep == len(cls) {
		return cls, nil
	}
	// Returned back to front, so they keep their order.
	for i := len(cls) - 1; i >= keep; i-- {
		if err := c.f.Release(ctx, cls[i:i+1]); err != nil {
			return nil, unavailable("release", err)
		}
	}
	if keep == 0 {
		if err := c.enforceLimit(ctx, host, done); err != nil {
			return nil, unavailable("limit", err)
		}
	}
	return cls[:keep], nil
}
