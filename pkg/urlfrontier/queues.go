package urlfrontier

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

// ListCrawls names the crawls that were put into.
func (s *Server) ListCrawls(ctx context.Context, _ *pb.Local) (*pb.StringList, error) {
	ids, err := s.crawlIDs(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.StringList{Values: ids}, nil
}

// DeleteCrawl drops a crawl's frontier and the service's state beside it;
// it returns the URLs that were queued, in flight or scheduled.
func (s *Server) DeleteCrawl(ctx context.Context, req *pb.DeleteCrawlMessage) (*pb.Long, error) {
	c, err := s.getCrawl(ctx, req.GetValue())
	if err != nil || c == nil {
		return &pb.Long{}, err
	}
	st, err := c.f.Stats(ctx)
	if err != nil {
		return nil, unavailable("stats", err)
	}
	due, err := s.rdb.ZCard(ctx, c.key("due")).Result()
	if err != nil {
		return nil, unavailable("stats", err)
	}
	if err := c.f.Drop(ctx); err != nil {
		return nil, unavailable("delete crawl", err)
	}
	if err := s.rdb.SRem(ctx, s.crawlsKey(), c.id).Err(); err != nil {
		return nil, unavailable("delete crawl", err)
	}
	s.mu.Lock()
	delete(s.crawls, c.id)
	s.mu.Unlock()
	return &pb.Long{Value: uint64(st.Queued + st.InFlight + due)}, nil
}

// ListQueues pages through a crawl's queues, sorted by key.
func (s *Server) ListQueues(ctx context.Context, req *pb.Pagination) (*pb.QueueList, error) {
	out := &pb.QueueList{Start: req.GetStart(), CrawlID: req.GetCrawlID()}
	c, err := s.getCrawl(ctx, req.GetCrawlID())
	if err != nil || c == nil {
		return out, err
	}
	qs, err := c.f.HostQueues(ctx)
	if err != nil {
		return nil, unavailable("list queues", err)
	}
	blocks, err := s.rdb.HGetAll(ctx, c.key("block")).Result()
	if err != nil {
		return nil, unavailable("list queues", err)
	}
	now := c.now().UnixMilli()
	size := int(req.GetSize())
	if size == 0 {
		size = 100
	}
	var total int
	for _, q := range qs {
		b, _ := strconv.ParseInt(blocks[q.Host], 10, 64)
		active := (q.Queued > 0 || q.InFlight > 0) && b <= now
		if !active && !req.GetIncludeInactive() {
			continue
		}
		if total >= int(req.GetStart()) && len(out.Values) < size {
			out.Values = append(out.Values, q.Host)
		}
		total++
	}
	out.Total, out.Size = uint64(total), uint32(len(out.Values))
	return out, nil
}

// GetStats counts a crawl, or one of its queues.
func (s *Server) GetStats(ctx context.Context, req *pb.QueueWithinCrawlParams) (*pb.Stats, error) {
	id, err := crawlID(req.GetCrawlID())
	if err != nil {
		return nil, err
	}
	out := &pb.Stats{CrawlID: id, Counts: map[string]uint64{}}
	c, err := s.getCrawl(ctx, id)
	if err != nil || c == nil {
		return out, err
	}
	if k := req.GetKey(); k != "" {
		h, err := c.f.Host(ctx, k)
		if frontier.IsUnknownHost(err) {
			return nil, status.Errorf(codes.InvalidArgument, "queue %q is unknown in crawl %s", k, id)
		}
		if err != nil {
			return nil, unavailable("stats", err)
		}
		done, err := s.rdb.HGet(ctx, c.key("done"), k).Uint64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, unavailable("stats", err)
		}
		out.Size, out.InProcess, out.NumberOfQueues = uint64(h.Queued), uint32(h.InFlight), 1
		out.Counts["completed"] = done
		return out, nil
	}
	st, err := c.f.Stats(ctx)
	if err != nil {
		return nil, unavailable("stats", err)
	}
	dones, err := s.rdb.HVals(ctx, c.key("done")).Result()
	if err != nil {
		return nil, unavailable("stats", err)
	}
	var done uint64
	for _, d := range dones {
		n, _ := strconv.ParseUint(d, 10, 64)
		done += n
	}
	due, err := s.rdb.ZCard(ctx, c.key("due")).Result()
	if err != nil {
		return nil, unavailable("stats", err)
	}
	out.Size, out.InProcess, out.NumberOfQueues = uint64(st.Queued), uint32(st.InFlight), uint64(st.Hosts)
	out.Counts["completed"], out.Counts["scheduled"] = done, uint64(due)
	out.Counts["active_queues"] = uint64(st.Hosts - st.ExhaustedHosts)
	return out, nil
}

// DeleteQueue removes a queue's queued and scheduled URLs (those in
// flight stay until completed); it returns how many went.
func (s *Server) DeleteQueue(ctx context.Context, req *pb.QueueWithinCrawlParams) (*pb.Long, error) {
	k := req.GetKey()
	if k == "" {
		return nil, status.Error(codes.InvalidArgument, "DeleteQueue needs a queue key")
	}
	c, err := s.getCrawl(ctx, req.GetCrawlID())
	if err != nil || c == nil {
		return &pb.Long{}, err
	}
	cls, err := c.f.TakeQueued(ctx, frontier.Selector{Host: func(h string) bool { return h == k }}, time.Minute)
	if err != nil {
		return nil, unavailable("delete queue", err)
	}
	outs := make([]frontier.Outcome, len(cls))
	for i, cl := range cls {
		outs[i] = frontier.Outcome{Claim: cl, Status: frontier.StatusDeleted, NotFetched: true, Policy: c.policy(0)}
	}
	if _, err := c.f.Complete(ctx, outs); err != nil {
		return nil, unavailable("delete queue", err)
	}
	n, err := c.unschedule(ctx, func(host string) bool { return host == k })
	if err != nil {
		return nil, unavailable("delete queue", err)
	}
	return &pb.Long{Value: uint64(len(cls)) + n}, nil
}

// unschedule drops the scheduled URLs whose queue sel picks.
func (c *crawl) unschedule(ctx context.Context, sel func(host string) bool) (uint64, error) {
	urls, err := c.s.rdb.ZRange(ctx, c.key("due"), 0, -1).Result()
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, u := range urls {
		if h, err := hostkey.Authority(u); err == nil && sel(h) {
			if err := c.s.rdb.ZRem(ctx, c.key("due"), u).Err(); err != nil {
				return n, err
			}
			c.s.rdb.HDel(ctx, c.key("meta"), u)
			n++
		}
	}
	return n, nil
}

// BlockQueueUntil holds a queue until a time (Unix seconds); 0 frees it.
// The block outlasts the completions of URLs in flight meanwhile.
func (s *Server) BlockQueueUntil(ctx context.Context, req *pb.BlockQueueParams) (*pb.Empty, error) {
	k := req.GetKey()
	if k == "" {
		return nil, status.Error(codes.InvalidArgument, "BlockQueueUntil needs a queue key")
	}
	if req.GetTime() > maxDate {
		return nil, status.Errorf(codes.InvalidArgument, "time %d: past year 9999 (a negative number sent unsigned?)", req.GetTime())
	}
	c, err := s.getCrawl(ctx, req.GetCrawlID())
	if err != nil || c == nil {
		return &pb.Empty{}, err
	}
	until := time.Unix(int64(req.GetTime()), 0)
	if req.GetTime() == 0 {
		err = s.rdb.HDel(ctx, c.key("block"), k).Err()
		until = time.Time{}
	} else {
		err = s.rdb.HSet(ctx, c.key("block"), k, until.UnixMilli()).Err()
	}
	if err == nil {
		_, err = c.f.HoldHost(ctx, k, until)
	}
	if err != nil {
		return nil, unavailable("block queue", err)
	}
	return &pb.Empty{}, nil
}

// SetDelay sets the wait between servings of a queue (an empty key: of
// every queue without its own). It counts from each completion.
func (s *Server) SetDelay(ctx context.Context, req *pb.QueueDelayParams) (*pb.Empty, error) {
	c, err := s.crawl(ctx, req.GetCrawlID(), true)
	if err != nil {
		return nil, err
	}
	ms := time.Duration(req.GetDelayRequestable()) * time.Second / time.Millisecond
	if err := s.rdb.HSet(ctx, c.key("delay"), req.GetKey(), int64(ms)).Err(); err != nil {
		return nil, unavailable("set delay", err)
	}
	return &pb.Empty{}, nil
}

// SetCrawlLimit caps the URLs a queue may complete; a queue at its limit
// serves nothing more, and 0 lifts the limit.
func (s *Server) SetCrawlLimit(ctx context.Context, req *pb.CrawlLimitParams) (*pb.Empty, error) {
	k := req.GetKey()
	if k == "" {
		return nil, status.Error(codes.InvalidArgument, "SetCrawlLimit needs a queue key")
	}
	c, err := s.crawl(ctx, req.GetCrawlID(), true)
	if err != nil {
		return nil, err
	}
	done, err := s.rdb.HGet(ctx, c.key("done"), k).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, unavailable("set limit", err)
	}
	if req.GetLimit() == 0 {
		err = s.rdb.HDel(ctx, c.key("limit"), k).Err()
	} else {
		err = s.rdb.HSet(ctx, c.key("limit"), k, req.GetLimit()).Err()
	}
	if err != nil {
		return nil, unavailable("set limit", err)
	}
	if req.GetLimit() == 0 || int64(req.GetLimit()) > done {
		// Lifted or raised: a queue blocked by its old limit serves again
		// (after its own block, if any).
		b, _ := s.rdb.HGet(ctx, c.key("block"), k).Int64()
		_, err = c.f.HoldHost(ctx, k, time.UnixMilli(b))
	} else {
		err = c.enforceLimit(ctx, k, done)
	}
	if err != nil {
		return nil, unavailable("set limit", err)
	}
	return &pb.Empty{}, nil
}
