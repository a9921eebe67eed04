package urlfrontier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

// metaKey is the heritable-data key under which a URL's URLFrontier
// metadata travels through the frontier (in its context blob), so that
// GetURLs returns what PutURLs was given.
const metaKey = "urlfrontier"

// never is the recrawl interval of every admission: a URL the frontier
// has finished is not queued again by a discovery, only by its
// refetchable date.
const never = int64(100 * 365 * 24 * 3600)

// crawl is one crawl id's frontier and the service's state beside it,
// under the frontier's prefix:
//
//	uf:due    zset  URL → refetchable date (ms), known URLs to serve again
//	uf:meta   hash  URL → the metadata of a URL in uf:due (JSON)
//	uf:delay  hash  queue → delay between servings (ms); "" the default
//	uf:block  hash  queue → blocked until (ms)
//	uf:limit  hash  queue → URLs it may complete
//	uf:done   hash  queue → URLs it completed
type crawl struct {
	id string
	f  *frontier.Frontier
	s  *Server
}

func (c *crawl) key(name string) string { return c.f.Prefix() + "uf:" + name }

func (c *crawl) now() time.Time { return c.s.cfg.Now() }

// delay is queue's delay between servings.
func (c *crawl) delay(ctx context.Context, queue string) (time.Duration, error) {
	v, err := c.s.rdb.HMGet(ctx, c.key("delay"), queue, "").Result()
	if err != nil {
		return 0, err
	}
	for _, x := range v {
		if s, ok := x.(string); ok {
			n, _ := strconv.ParseInt(s, 10, 64)
			return time.Duration(n) * time.Millisecond, nil
		}
	}
	return 0, nil
}

// policy is the policy of a queue's admissions and completions.
func (c *crawl) policy(delay time.Duration) frontier.Policy {
	p := c.s.cfg.Policy
	p.Politeness.DelayFactor = 0
	p.Politeness.MinDelayMs, p.Politeness.MaxDelayMs = delay.Milliseconds(), delay.Milliseconds()
	p.Politeness.RespectCrawlDelayUpToSeconds = 0
	p.Frontier.ParallelQueues = 1
	p.Frontier.PreferenceDepthHops = -1
	p.Frontier.RecrawlIntervalSeconds = never
	p.Frontier.RecrawlAdaptive = false
	return p
}

// launch is the frontier's form of a URLInfo.
func launch(info *pb.URLInfo, force bool) (messages.Launch, error) {
	l := messages.Launch{URL: info.GetUrl(), ForceFetch: force, Headers: map[string]string{}, Sheets: []string{}}
	if len(info.GetMetadata()) > 0 {
		md := make(map[string][]string, len(info.GetMetadata()))
		for k, v := range info.GetMetadata() {
			md[k] = v.GetValues()
		}
		raw, err := json.Marshal(md)
		if err != nil {
			return l, fmt.Errorf("metadata: %w", err)
		}
		l.ParentURLMetadata.HeritableData.Extra = map[string]json.RawMessage{metaKey: raw}
	}
	return l, nil
}

// urlInfo is the URLInfo of a launch.
func (c *crawl) urlInfo(l messages.Launch, queue string) *pb.URLInfo {
	info := &pb.URLInfo{Url: l.URL, Key: queue, CrawlID: c.id}
	if raw, ok := l.ParentURLMetadata.HeritableData.Extra[metaKey]; ok {
		info.Metadata = decodeMeta(raw)
	}
	return info
}

func decodeMeta(raw []byte) map[string]*pb.StringList {
	var md map[string][]string
	if json.Unmarshal(raw, &md) != nil || len(md) == 0 {
		return nil
	}
	out := make(map[string]*pb.StringList, len(md))
	for k, v := range md {
		out[k] = &pb.StringList{Values: v}
	}
	return out
}

// schedule puts a known URL in uf:due, to be queued again at date.
func (c *crawl) schedule(ctx context.Context, info *pb.URLInfo, date time.Time) error {
	pipe := c.s.rdb.TxPipeline()
	pipe.ZAdd(ctx, c.key("due"), redis.Z{Score: float64(date.UnixMilli()), Member: info.GetUrl()})
	if len(info.GetMetadata()) > 0 {
		l, err := launch(info, false)
		if err != nil {
			return err
		}
		pipe.HSet(ctx, c.key("meta"), info.GetUrl(), string(l.ParentURLMetadata.HeritableData.Extra[metaKey]))
	} else {
		pipe.HDel(ctx, c.key("meta"), info.GetUrl())
	}
	_, err := pipe.Exec(ctx)
	return err
}

// dueBatch bounds the scheduled URLs one promotion queues.
const dueBatch = 1000

// promote queues the scheduled URLs whose date has come, oldest date
// first, as forced admissions (ahead of discovered URLs in their queue).
// Of two servers promoting at once, the one whose ZREM removes a URL
// queues it.
func (c *crawl) promote(ctx context.Context) error {
	for {
		urls, err := c.s.rdb.ZRangeByScore(ctx, c.key("due"), &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(c.now().UnixMilli(), 10), Count: dueBatch}).Result()
		if err != nil || len(urls) == 0 {
			return err
		}
		metas, err := c.s.rdb.HMGet(ctx, c.key("meta"), urls...).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		var cands []frontier.Candidate
		for i, u := range urls {
			n, err := c.s.rdb.ZRem(ctx, c.key("due"), u).Result()
			if err != nil {
				return err
			}
			if n == 0 {
				continue
			}
			l := messages.Launch{URL: u, ForceFetch: true, Headers: map[string]string{}, Sheets: []string{}}
			if m, ok := metas[i].(string); ok {
				l.ParentURLMetadata.HeritableData.Extra = map[string]json.RawMessage{metaKey: json.RawMessage(m)}
			}
			cands = append(cands, frontier.Candidate{Launch: l, Policy: c.policy(0)})
		}
		if len(cands) > 0 {
			if _, err := c.f.Admit(ctx, cands); err != nil {
				return err
			}
			c.s.rdb.HDel(ctx, c.key("meta"), urls...)
		}
		if len(urls) < dueBatch {
			return nil
		}
	}
}

// errLeaseLost: the lease ran out (and was reaped) between finding it
// and completing it.
var errLeaseLost = errors.New("lease lost")

// complete finishes a claim handed out by GetURLs (or taken for an
// update): it counts against its queue's limit and the queue waits its
// delay, or its block if later.
func (c *crawl) complete(ctx context.Context, cl *frontier.Claim) error {
	delay, err := c.delay(ctx, cl.Host)
	if err != nil {
		return err
	}
	wait := delay
	if b, err := c.s.rdb.HGet(ctx, c.key("block"), cl.Host).Int64(); err == nil {
		wait = max(wait, time.UnixMilli(b).Sub(c.now()))
	}
	// The API carries no fetch status: a completion counts as a 200 of 0
	// bytes in Trawler's totals.
	out := frontier.Outcome{Claim: cl, Status: 200, Policy: c.policy(delay),
		Decision: &frontier.Decision{Status: 200, Wait: max(wait, 0)}}
	ok, err := c.f.Complete(ctx, []frontier.Outcome{out})
	if err != nil {
		return err
	}
	if !ok[0] {
		return errLeaseLost
	}
	done, err := c.s.rdb.HIncrBy(ctx, c.key("done"), cl.Host, 1).Result()
	if err != nil {
		return err
	}
	return c.enforceLimit(ctx, cl.Host, done)
}

// enforceLimit blocks a queue that has completed its limit.
func (c *crawl) enforceLimit(ctx context.Context, queue string, done int64) error {
	limit, err := c.s.rdb.HGet(ctx, c.key("limit"), queue).Int64()
	if errors.Is(err, redis.Nil) || limit == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	if done >= limit {
		_, err = c.f.HoldHost(ctx, queue, c.now().Add(time.Duration(never)*time.Second))
	}
	return err
}
