package frontier

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Stats describes the frontier's contents in Heritrix's queue terms.
type Stats struct {
	Queued   int64 // URIs waiting in host queues, Held included
	InFlight int64 // URIs leased to workers
	// Held counts the queued URIs set aside while their target is paused:
	// no claim takes them until the target resumes. They count in Queued,
	// as URIs of a paused host do, so a crawl with only those left is not
	// idle.
	Held int64
	// Hosts counts every host the frontier knows. Of those with URIs
	// queued and a free slot, ReadyHosts may be fetched now and
	// SnoozedHosts wait for their politeness or retry delay. BusyHosts
	// ("in-process") have URIs in flight; ExhaustedHosts have nothing
	// queued or in flight; PausedHosts (Heritrix's retired queues) were
	// paused by an operator.
	Hosts, ReadyHosts, SnoozedHosts, BusyHosts, ExhaustedHosts, PausedHosts int64
	// BackingOffHosts are hosts waiting out a back-off that a 429 or 503
	// asked for (most are also snoozed; one may be busy meanwhile with a
	// parallel queue).
	BackingOffHosts int64
	// BackOffs429 and BackOffs503 count the crawl's back-offs by the
	// status that asked for them.
	BackOffs429, BackOffs503 int64
	// BackOffsChallenge counts back-offs after bot-challenge pages.
	BackOffsChallenge int64
	// Paused is true when the whole frontier is paused.
	Paused bool
	// RetryHosts are snoozed hosts waiting for a retry delay (a failed
	// fetch, DNS lookup or robots.txt), RetryURIs the URIs queued at
	// them, and NextRetry when the first wait ends (zero: none waits).
	RetryHosts, RetryURIs int64
	NextRetry             time.Time
	// BloomURIs counts the URIs the Bloom filter holds (those that set a
	// bit when admitted; profile seenFilter bloom only), and
	// BloomFalsePositiveRate is the rate at which it would take a new URI
	// for a seen one at that size: the mean over the shards' filters
	// (a candidate meets its host's shard's), each
	// (1 - e^(-k·n/m))^k for its n URIs, m bits and k hashes.
	BloomURIs              int64
	BloomFalsePositiveRate float64
}

// Stats reads the counters of every shard in one round trip.
func (f *Frontier) Stats(ctx context.Context) (Stats, error) {
	now := strconv.FormatInt(ms(f.now()), 10)
	pipe := f.rdb.Pipeline()
	type shardCmds struct {
		meta         *redis.MapStringStringCmd
		ready, total *redis.IntCmd
		paused       *redis.IntCmd
		backingOff   *redis.IntCmd
		backOffs     *redis.MapStringStringCmd
	}
	cmds := make([]shardCmds, len(f.prefixes))
	for i, p := range f.prefixes {
		cmds[i] = shardCmds{
			meta:   pipe.HGetAll(ctx, p+"meta"),
			ready:  pipe.ZCount(ctx, p+"ready", "-inf", now),
			total:  pipe.ZCard(ctx, p+"ready"),
			paused: pipe.Exists(ctx, p+"paused"),
			// Back-offs that ended stay in the zset until the next one.
			backingOff: pipe.ZCount(ctx, p+"backoff", "("+now, "+inf"),
			backOffs:   pipe.HGetAll(ctx, p+"backoffs"),
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return Stats{}, fmt.Errorf("frontier %s stats: %w", f.name, err)
	}
	var st Stats
	for _, c := range cmds {
		m := c.meta.Val()
		get := func(k string) int64 { n, _ := strconv.ParseInt(m[k], 10, 64); return n }
		st.Queued += get("queued") + get("held")
		st.InFlight += get("inflight")
		st.Held += get("held")
		st.Hosts += get("hosts")
		st.BusyHosts += get("busy")
		st.ExhaustedHosts += get("exhausted")
		st.PausedHosts += get("paused")
		st.ReadyHosts += c.ready.Val()
		st.SnoozedHosts += c.total.Val() - c.ready.Val()
		st.Paused = st.Paused || c.paused.Val() > 0
		st.BackingOffHosts += c.backingOff.Val()
		bo := c.backOffs.Val()
		n429, _ := strconv.ParseInt(bo["429"], 10, 64)
		n503, _ := strconv.ParseInt(bo["503"], 10, 64)
		nch, _ := strconv.ParseInt(bo[BackOffChallenge], 10, 64)
		st.BackOffs429 += n429
		st.BackOffs503 += n503
		st.BackOffsChallenge += nch
		if f.mode == "b" {
			n := get("bloomn")
			st.BloomURIs += n
			st.BloomFalsePositiveRate += f.bloom.falsePositiveRate(n) / float64(len(f.prefixes))
		}
	}
	var err error
	if st.RetryHosts, st.RetryURIs, st.NextRetry, err = f.retryStats(ctx, ms(f.now())); err != nil {
		return Stats{}, err
	}
	return st, nil
}

// HostInfo is the frontier's view of one host (queue).
type HostInfo struct {
	Host     string
	Queued   int64
	InFlight int64
	// Held counts its queued URIs set aside while their target is paused
	// (in Queued too).
	Held           int64
	ParallelQueues int
	Paused         bool
	// NextFetch is when the host may be fetched again (zero: at once).
	NextFetch time.Time
	// Ready reports whether the host is in the ready set.
	Ready bool
	// CrawlDelay is the robots.txt Crawl-delay last reported for it.
	CrawlDelay time.Duration
	// Server counts fetches of this host:port, HostName of the host name.
	Server, HostName Usage
	// BackOffs counts the host's back-offs in a row, asked for with status
	// BackOffStatus (429, 503); BackOffUntil is when the last one ends
	// (zero when the host is not backing off).
	BackOffs      int
	BackOffStatus int
	BackOffUntil  time.Time
	// BackOffReason is what asked for the back-off: the status ("429",
	// "503") or BackOffChallenge (BackOffStatus is then 0).
	BackOffReason string
}

// Host returns the state of one host; an unknown host is an error.
func (f *Frontier) Host(ctx context.Context, host string) (HostInfo, error) {
	p := f.prefixes[f.shardOf(host)]
	pipe := f.rdb.Pipeline()
	h := pipe.HGetAll(ctx, p+"h:"+host)
	hn := pipe.HGetAll(ctx, p+"hn:"+hostnameOf(host))
	rd := pipe.ZScore(ctx, p+"ready", host)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return HostInfo{}, fmt.Errorf("frontier %s host %s: %w", f.name, host, err)
	}
	m := h.Val()
	if len(m) == 0 {
		return HostInfo{}, fmt.Errorf("frontier %s host %s: %w", f.name, host, errNoHost)
	}
	get := func(m map[string]string, k string) int64 { n, _ := strconv.ParseInt(m[k], 10, 64); return n }
	info := HostInfo{
		Host: host, Queued: get(m, "n") + get(m, "hp"), InFlight: get(m, "a"), Held: get(m, "hp"), ParallelQueues: int(get(m, "pq")),
		Paused: m["p"] == "1", Ready: rd.Err() == nil, CrawlDelay: time.Duration(get(m, "cd")) * time.Millisecond,
		Server:   Usage{get(m, "fs"), get(m, "sb"), get(m, "fr"), get(m, "ab")},
		HostName: Usage{get(hn.Val(), "fs"), get(hn.Val(), "sb"), get(hn.Val(), "fr"), get(hn.Val(), "ab")},
	}
	if next := get(m, "next"); next > 0 {
		info.NextFetch = time.UnixMilli(next)
	}
	if bo := get(m, "bo"); bo > 0 {
		info.BackOffs, info.BackOffStatus, info.BackOffReason = int(bo), int(get(m, "bs")), m["bs"]
		info.BackOffUntil = time.UnixMilli(get(m, "bu"))
	}
	return info, nil
}

func hostnameOf(host string) string {
	i := strings.LastIndexByte(host, ':')
	if i < 0 || strings.HasSuffix(host, "]") {
		return host
	}
	if _, err := strconv.Atoi(host[i+1:]); err != nil {
		return host
	}
	return host[:i]
}

// Pause stops all claims until Resume; work in flight finishes.
func (f *Frontier) Pause(ctx context.Context) error {
	pipe := f.rdb.Pipeline()
	for _, p := range f.prefixes {
		pipe.Set(ctx, p+"paused", "1", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("frontier %s pause: %w", f.name, err)
	}
	return nil
}

// Resume undoes Pause.
func (f *Frontier) Resume(ctx context.Context) error {
	pipe := f.rdb.Pipeline()
	for _, p := range f.prefixes {
		pipe.Del(ctx, p+"paused")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("frontier %s resume: %w", f.name, err)
	}
	return nil
}

// PauseHost takes one host out of the ready set until ResumeHost.
func (f *Frontier) PauseHost(ctx context.Context, host string) error {
	return f.pauseHost(ctx, host, true)
}

// ResumeHost makes a paused host eligible again.
func (f *Frontier) ResumeHost(ctx context.Context, host string) error {
	return f.pauseHost(ctx, host, false)
}

func (f *Frontier) pauseHost(ctx context.Context, host string, pause bool) error {
	replies, err := f.runAll(ctx, f.sc.pauseHost, []call{{shard: f.shardOf(host), args: []any{ms(f.now()), flag(pause), host}}})
	if err != nil {
		return fmt.Errorf("frontier %s pause host %s: %w", f.name, host, err)
	}
	if toInt(replies[0]) < 0 {
		return fmt.Errorf("frontier %s pause host %s: %w", f.name, host, errNoHost)
	}
	return nil
}

// Totals are the crawl-wide counters of finished URIs, kept by Complete
// in Redis so they cover every worker and survive restarts.
type Totals struct {
	URIs       int64 // finished URIs
	Bytes      int64 // bytes on the wire
	Downloaded int64 // finished with an HTTP response
	Retries    int64 // attempts that ended in a retry
	// Novel and NovelBytes count the finished URIs with a response (or
	// DNS record) that is not a revisit, and their recorded bytes:
	// Heritrix's novelCount and novel, for maxNovelUrls/maxNovelBytes.
	Novel, NovelBytes int64
	ByStatus          map[int]int64
	// AdaptiveSaved counts, by launch id ("" for URIs of no launch), the
	// distinct URLs adaptive recrawl held back (CountAdaptiveSaved).
	AdaptiveSaved map[string]int64
}

// Keys of the adaptive recrawl savings: the launches that have any, and
// per launch a HyperLogLog of the URLs held back, so a URL offered many
// times (found on many pages) counts once, in 12 KB whatever the crawl's
// size.
const (
	adaptiveLaunchesKey = "adaptive-launches"
	adaptiveSavedKey    = "adaptive-saved:"
)

// CountAdaptiveSaved records urls as fetches adaptive recrawl saved in
// the launch of that id ("" for none), kept with the totals.
func (f *Frontier) CountAdaptiveSaved(ctx context.Context, launchID string, urls []string) error {
	if len(urls) == 0 {
		return nil
	}
	els := make([]any, len(urls))
	for i, u := range urls {
		els[i] = u
	}
	p := f.prefixes[0]
	_, err := f.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.SAdd(ctx, p+adaptiveLaunchesKey, launchID)
		pipe.PFAdd(ctx, p+adaptiveSavedKey+launchID, els...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("frontier %s count adaptive recrawl savings: %w", f.name, err)
	}
	return nil
}

// adaptiveSaved reads the savings of every launch (estimates within about
// 1%, as HyperLogLog counts).
func (f *Frontier) adaptiveSaved(ctx context.Context) (map[string]int64, error) {
	p := f.prefixes[0]
	ids, err := f.rdb.SMembers(ctx, p+adaptiveLaunchesKey).Result()
	if err != nil {
		return nil, fmt.Errorf("frontier %s adaptive recrawl savings: %w", f.name, err)
	}
	out := make(map[string]int64, len(ids))
	for _, id := range ids {
		n, err := f.rdb.PFCount(ctx, p+adaptiveSavedKey+id).Result()
		if err != nil {
			return nil, fmt.Errorf("frontier %s adaptive recrawl savings of %q: %w", f.name, id, err)
		}
		out[id] = n
	}
	return out, nil
}

// Totals reads the counters of every shard.
func (f *Frontier) Totals(ctx context.Context) (Totals, error) {
	pipe := f.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(f.prefixes))
	for i, p := range f.prefixes {
		cmds[i] = pipe.HGetAll(ctx, p+"stats")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return Totals{}, fmt.Errorf("frontier %s totals: %w", f.name, err)
	}
	t := Totals{ByStatus: map[int]int64{}}
	for _, c := range cmds {
		for k, v := range c.Val() {
			n, _ := strconv.ParseInt(v, 10, 64)
			switch {
			case k == "bytes":
				t.Bytes += n
			case k == "downloaded":
				t.Downloaded += n
			case k == "retries":
				t.Retries += n
			case k == "novel":
				t.Novel += n
			case k == "novelBytes":
				t.NovelBytes += n
			case strings.HasPrefix(k, "status:"):
				if code, err := strconv.Atoi(strings.TrimPrefix(k, "status:")); err == nil {
					t.ByStatus[code] += n
					t.URIs += n
					if code > 0 {
						t.Downloaded += n
					}
				}
			}
		}
	}
	saved, err := f.adaptiveSaved(ctx)
	if err != nil {
		return Totals{}, err
	}
	t.AdaptiveSaved = saved
	return t, nil
}

// Empty reports whether the frontier holds nothing at all: no host ever
// admitted and no totals. A rebuild runs only on an empty frontier.
func (f *Frontier) Empty(ctx context.Context) (bool, error) {
	pipe := f.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(f.prefixes))
	for i, p := range f.prefixes {
		cmds[i] = pipe.Exists(ctx, p+"meta", p+"stats", p+"seq")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return false, fmt.Errorf("frontier %s empty: %w", f.name, err)
	}
	for _, c := range cmds {
		if c.Val() > 0 {
			return false, nil
		}
	}
	return true, nil
}
