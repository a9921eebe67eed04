package urlfrontier

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

// GetURLStatus says where a URL is: queued or in flight (known, dated
// when its queue may next serve, now at the earliest), scheduled again
// (known, its date), finished for good (known, date 0); NotFound when
// the crawl does not know it (a Bloom-mode frontier forgets finished
// URLs).
func (s *Server) GetURLStatus(ctx context.Context, req *pb.URLStatusRequest) (*pb.URLItem, error) {
	// The key is not checked: Trawler's queue is the URL's host whatever
	// the client calls it.
	info := &pb.URLInfo{Url: req.GetUrl(), CrawlID: req.GetCrawlID()}
	host, err := checkInfo(info)
	if err != nil {
		return nil, err
	}
	c, err := s.getCrawl(ctx, req.GetCrawlID())
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "URL %q is not in crawl %s", req.GetUrl(), DefaultCrawl)
	}
	info.Key, info.CrawlID = host, c.id
	known := func(date int64) *pb.URLItem {
		return &pb.URLItem{ID: req.GetUrl(), Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{Info: info, RefetchableFromDate: uint64(date)}}}
	}
	due, err := s.rdb.ZScore(ctx, c.key("due"), req.GetUrl()).Result()
	if err == nil {
		if m, err := s.rdb.HGet(ctx, c.key("meta"), req.GetUrl()).Result(); err == nil {
			info.Metadata = decodeMeta([]byte(m))
		}
		return known(int64(due) / 1000), nil
	}
	if !errors.Is(err, redis.Nil) {
		return nil, unavailable("URL status", err)
	}
	st, err := c.f.URIState(ctx, req.GetUrl())
	if err != nil {
		return nil, unavailable("URL status", err)
	}
	switch st.State {
	case frontier.URIFinished:
		return known(0), nil
	case frontier.URIQueued, frontier.URIHeld, frontier.URIInFlight:
		date := c.now()
		if st.Due.After(date) {
			date = st.Due
		}
		return known(date.Unix()), nil
	}
	return nil, status.Errorf(codes.NotFound, "URL %q is not in crawl %s", req.GetUrl(), c.id)
}

// listed is one URL a dump lists.
type listed struct {
	info *pb.URLInfo
	date int64 // refetchable date (Unix s)
}

// each calls fn with the URLs a crawl holds, queue by queue (key: one
// queue): in flight, then queued in the order they will be served; then
// the scheduled ones by date. fn returns false to stop. Finished URLs are
// not listed: the frontier keeps only a hash of them.
func (c *crawl) each(ctx context.Context, key string, fn func(listed) bool) error {
	now := c.now().Unix()
	inflight, err := c.f.InFlight(ctx, key)
	if err != nil {
		return err
	}
	byHost := map[string][]*frontier.Claim{}
	for _, cl := range inflight {
		byHost[cl.Host] = append(byHost[cl.Host], cl)
	}
	hosts := []string{key}
	if key == "" {
		qs, err := c.f.HostQueues(ctx)
		if err != nil {
			return err
		}
		hosts = hosts[:0]
		for _, q := range qs {
			hosts = append(hosts, q.Host)
		}
	}
	for _, h := range hosts {
		for _, cl := range byHost[h] {
			if !fn(listed{c.urlInfo(cl.Launch, h), now}) {
				return nil
			}
		}
		ls, err := c.f.Queued(ctx, h)
		if err != nil {
			return err
		}
		for _, l := range ls {
			if !fn(listed{c.urlInfo(l, h), now}) {
				return nil
			}
		}
	}
	due, err := c.s.rdb.ZRangeWithScores(ctx, c.key("due"), 0, -1).Result()
	if err != nil {
		return err
	}
	for _, z := range due {
		u, _ := z.Member.(string)
		h, err := hostkey.Authority(u)
		if err != nil || (key != "" && h != key) {
			continue
		}
		if !fn(listed{&pb.URLInfo{Url: u, Key: h, CrawlID: c.id}, int64(z.Score) / 1000}) {
			return nil
		}
	}
	return nil
}

// matcher is a URL filter of ListURLs and CountURLs: a substring,
// optionally ignoring case.
func matcher(filter *string, ignoreCase bool) func(string) bool {
	if filter == nil || *filter == "" {
		return func(string) bool { return true }
	}
	f := *filter
	if ignoreCase {
		f = strings.ToLower(f)
		return func(u string) bool { return strings.Contains(strings.ToLower(u), f) }
	}
	return func(u string) bool { return strings.Contains(u, f) }
}

// ListURLs streams a page of the URLs a crawl (or queue) holds that match
// the filter: in flight, queued and scheduled; not finished ones.
func (s *Server) ListURLs(req *pb.ListUrlParams, stream pb.URLFrontier_ListURLsServer) error {
	ctx := stream.Context()
	c, err := s.getCrawl(ctx, req.GetCrawlID())
	if err != nil || c == nil {
		return err
	}
	size := int(req.GetSize())
	if size == 0 {
		size = 100
	}
	match := matcher(req.Filter, req.GetIgnoreCase())
	seen, sent := 0, 0
	var sendErr error
	err = c.each(ctx, req.GetKey(), func(l listed) bool {
		if !match(l.info.GetUrl()) {
			return true
		}
		if seen++; seen <= int(req.GetStart()) {
			return true
		}
		sendErr = stream.Send(&pb.URLItem{ID: l.info.GetUrl(),
			Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{Info: l.info, RefetchableFromDate: uint64(l.date)}}})
		sent++
		return sendErr == nil && sent < size
	})
	if err != nil {
		return unavailable("list URLs", err)
	}
	return sendErr
}

// CountURLs counts the URLs ListURLs would list (finished ones are not
// counted: see ListURLs).
func (s *Server) CountURLs(ctx context.Context, req *pb.CountUrlParams) (*pb.Long, error) {
	c, err := s.getCrawl(ctx, req.GetCrawlID())
	if err != nil || c == nil {
		return &pb.Long{}, err
	}
	match := matcher(req.Filter, req.GetIgnoreCase())
	var n uint64
	err = c.each(ctx, req.GetKey(), func(l listed) bool {
		if match(l.info.GetUrl()) {
			n++
		}
		return true
	})
	if err != nil {
		return nil, unavailable("count URLs", err)
	}
	return &pb.Long{Value: n}, nil
}

// PurgeURLs is not offered: Trawler keeps no creation date per URL.
func (s *Server) PurgeURLs(context.Context, *pb.PurgeUrlParams) (*pb.Long, error) {
	return nil, status.Error(codes.Unimplemented, "PurgeURLs: Trawler's frontier keeps no creation date per URL, so it cannot tell a URL's age")
}

// ListNodes names this node: Trawler's service is not a cluster of
// URLFrontier nodes (its frontier is shared through Redis instead).
func (s *Server) ListNodes(context.Context, *pb.Empty) (*pb.StringList, error) {
	return &pb.StringList{Values: []string{s.cfg.Node}}, nil
}

// SetActive stops (false) or restarts serving GetURLs on this node; puts
// are still taken. The state is the process's, not Redis's: a restart is
// active.
func (s *Server) SetActive(_ context.Context, req *pb.Active) (*pb.Empty, error) {
	s.active.Store(req.GetState())
	s.log.Info("urlfrontier active", "state", req.GetState())
	return &pb.Empty{}, nil
}

// GetActive says whether this node serves GetURLs.
func (s *Server) GetActive(context.Context, *pb.Local) (*pb.Boolean, error) {
	return &pb.Boolean{State: s.active.Load()}, nil
}

// SetLogLevel sets the service's log level; the package name is not used
// (the service has one logger).
func (s *Server) SetLogLevel(_ context.Context, req *pb.LogLevelParams) (*pb.Empty, error) {
	levels := map[pb.LogLevelParams_Level]int{
		pb.LogLevelParams_TRACE: -8, pb.LogLevelParams_DEBUG: -4, pb.LogLevelParams_INFO: 0,
		pb.LogLevelParams_WARN: 4, pb.LogLevelParams_ERROR: 8,
	}
	l, ok := levels[req.GetLevel()]
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "log level %d is not one of TRACE..ERROR", req.GetLevel())
	}
	s.cfg.Level.Set(slogLevel(l))
	return &pb.Empty{}, nil
}
