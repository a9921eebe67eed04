package harveststats

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Keys, under the crawl's prefix (one hash tag, so one slot on Redis
// Cluster):
//
//	srcs            zset  source -> last activity (ms)
//	s:<source>:l    zset  the source's launch timestamps (lexical)
//	s:<source>:e:<ts> zset  events naming launch <ts> (extra_info launchId)
//	s:<source>:ev   zset  the source's other events (JSON), by event time
//	act             hash  launch key -> last event of the launch (ms)
//	c:<launch key>  hash  the counts of a launch whose events name it
//	u:<launch key>  set   hashes of the URLs counted in it (counts.go)
//	o:<launch key>  hash  partition -> last offset counted, of a
//	                      streaming crawl's launch (stream.go)
//	sealed          hash  launch key -> state it was sealed in
//	done            hash  launch key -> metadata WARC written
//	stats           hash  launch key -> statistics as written (JSON)
//	donet, expired  zset  launch key -> when written / dropped (expire.go)
//
// Recording is a few ZADDs per event: a redelivered event is the same
// member again and changes nothing. An event that names its launch (the
// worker stamps every URI with its launch id, pkg/messages/launchid.go)
// is kept with that launch; one that does not (an older producer's)
// belongs to the latest launch of its source not after it, decided when a
// launch is read (see window). Either way the order in which events arrive
// does not matter. A named launch is counted as its events arrive, each URL
// once (counts.go); the others are counted from their events on reading.
// Once a launch's provenance is written its events are dropped and its
// statistics kept (Forget), so Redis holds the events of running launches
// only.

// Store keeps the statistics of one crawl in Redis. It is safe for
// concurrent use.
type Store struct {
	rdb    redis.UniversalClient
	crawl  string
	prefix string
	now    func() time.Time
	// backfilled: the launches done before their time was recorded
	// (donet, expire.go) have been given one.
	backfilled atomic.Bool
}

// New returns the store of crawl's statistics; now is the clock (nil:
// time.Now).
func New(rdb redis.UniversalClient, crawl string, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{rdb: rdb, crawl: crawl, prefix: "trawler:hs:{" + crawl + "}:", now: now}
}

func (s *Store) srcKey(source, part string) string { return s.prefix + "s:" + source + ":" + part }

// Record stores a batch of events. It is idempotent: a redelivered batch
// changes nothing.
func (s *Store) Record(ctx context.Context, events []messages.Crawled) error {
	if len(events) == 0 {
		return nil
	}
	now := float64(s.now().UnixMilli())
	pipe := s.rdb.Pipeline()
	named := map[Launch][]*messages.Crawled{}
	for i := range events {
		ev := &events[i]
		b, err := ev.MarshalJSON()
		if err != nil {
			return fmt.Errorf("harvest statistics: encode event %s: %w", ev.URL, err)
		}
		at, err := ev.Time()
		if err != nil {
			// The consumer's decoder accepts events without a usable time;
			// they count at the time they arrive.
			at = s.now()
		}
		z := redis.Z{Score: float64(at.UnixMilli()), Member: string(b)}
		if id := ev.LaunchID(); id != "" {
			l := Launch{Source: ev.Seed, Timestamp: id}
			named[l] = append(named[l], ev)
			pipe.ZAdd(ctx, s.srcKey(ev.Seed, "e:"+id), z)
			pipe.ZAdd(ctx, s.srcKey(ev.Seed, "l"), redis.Z{Member: id})
			pipe.HSet(ctx, s.prefix+"act", Launch{Source: ev.Seed, Timestamp: id}.Key(), int64(now))
		} else {
			pipe.ZAdd(ctx, s.srcKey(ev.Seed, "ev"), z)
		}
		if ts := LaunchTimestamp(ev.Annotations); ts != "" {
			pipe.ZAdd(ctx, s.srcKey(ev.Seed, "l"), redis.Z{Member: ts})
		}
		pipe.ZAdd(ctx, s.prefix+"srcs", redis.Z{Score: now, Member: ev.Seed})
	}
	s.count(ctx, pipe, named)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("harvest statistics: record %d events: %w", len(events), err)
	}
	return nil
}

// launchesOf returns a source's launches, oldest first: "" first when
// events came before its first launch (or it has none).
func (s *Store) launchesOf(ctx context.Context, source string) ([]string, error) {
	ls, err := s.rdb.ZRange(ctx, s.srcKey(source, "l"), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("harvest statistics: launches of %s: %w", source, err)
	}
	first := "+inf"
	if len(ls) > 0 {
		first = "(" + strconv.FormatInt(tsMillis(ls[0]), 10)
	}
	n, err := s.rdb.ZCount(ctx, s.srcKey(source, "ev"), "-inf", first).Result()
	if err != nil {
		return nil, fmt.Errorf("harvest statistics: events of %s: %w", source, err)
	}
	if n > 0 {
		ls = append([]string{""}, ls...)
	}
	return ls, nil
}

// launchesOfAll is launchesOf for many sources, in two pipelined rounds
// (the sealing loop asks for every source at each poll).
func (s *Store) launchesOfAll(ctx context.Context, sources []string) ([][]string, error) {
	pipe := s.rdb.Pipeline()
	ranges := make([]*redis.StringSliceCmd, len(sources))
	for i, src := range sources {
		ranges[i] = pipe.ZRange(ctx, s.srcKey(src, "l"), 0, -1)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("harvest statistics: launches of %d sources: %w", len(sources), err)
	}
	counts := make([]*redis.IntCmd, len(sources))
	for i, src := range sources {
		first := "+inf"
		if ls := ranges[i].Val(); len(ls) > 0 {
			first = "(" + strconv.FormatInt(tsMillis(ls[0]), 10)
		}
		counts[i] = pipe.ZCount(ctx, s.srcKey(src, "ev"), "-inf", first)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("harvest statistics: events of %d sources: %w", len(sources), err)
	}
	out := make([][]string, len(sources))
	for i := range sources {
		out[i] = ranges[i].Val()
		if counts[i].Val() > 0 {
			out[i] = append([]string{""}, out[i]...)
		}
	}
	return out, nil
}

// tsMillis is a 14-digit launch timestamp in Unix milliseconds; "" is the
// beginning of time.
func tsMillis(ts string) int64 {
	t, err := messages.ParseTimestamp14(ts)
	if ts == "" || err != nil {
		return 0
	}
	return t.UnixMilli()
}

// window returns the launch's events in time order: with named, those
// that name it; and the source's events that name no launch from its
// launch timestamp until the next launch's. With once, each URL is kept
// once (its first event); without, every event is (a retry's, a
// recrawl's), as crawl.log has a line for each.
func (s *Store) window(ctx context.Context, l Launch, once, named bool) ([]messages.Crawled, error) {
	ls, err := s.launchesOf(ctx, l.Source)
	if err != nil {
		return nil, err
	}
	i := slices.Index(ls, l.Timestamp)
	if i < 0 {
		return nil, fmt.Errorf("%w %s", ErrUnknownLaunch, l)
	}
	lo, hi := "-inf", "+inf"
	if l.Timestamp != "" {
		lo = strconv.FormatInt(tsMillis(l.Timestamp), 10)
	}
	if i+1 < len(ls) {
		hi = "(" + strconv.FormatInt(tsMillis(ls[i+1]), 10)
	}
	zs, err := s.pages(ctx, l, func(off int64) *redis.ZSliceCmd {
		return s.rdb.ZRangeByScoreWithScores(ctx, s.srcKey(l.Source, "ev"), &redis.ZRangeBy{Min: lo, Max: hi, Offset: off, Count: eventPage})
	})
	if err != nil {
		return nil, err
	}
	if named && l.Timestamp != "" {
		own, err := s.pages(ctx, l, func(off int64) *redis.ZSliceCmd {
			return s.rdb.ZRangeWithScores(ctx, s.srcKey(l.Source, "e:"+l.Timestamp), off, off+eventPage-1)
		})
		if err != nil {
			return nil, err
		}
		zs = append(zs, own...)
		slices.SortStableFunc(zs, func(a, b redis.Z) int { return cmp.Compare(a.Score, b.Score) })
	}
	seen := map[string]bool{}
	out := make([]messages.Crawled, 0, len(zs))
	for _, z := range zs {
		ev, err := messages.DecodeCrawled([]byte(z.Member.(string)))
		if err != nil {
			return nil, fmt.Errorf("harvest statistics: stored event of %s: %w", l, err)
		}
		if once {
			if seen[ev.URL] {
				continue // a recrawl within the launch, or a retried URI's repeat
			}
			seen[ev.URL] = true
		}
		out = append(out, ev)
	}
	return out, nil
}

// eventPage is how many stored events one read returns: a launch of
// millions read in one reply (about 0.8 KB an event) outlasts the
// client's read timeout, and the read was tried again at every poll
// (issue 36).
const eventPage = 10000

// pages reads a sorted set's members page by page (read returns the page
// at an offset) until a page comes back short. A member added meanwhile
// may be read twice; readers take each URL's first event, or each line
// once.
func (s *Store) pages(ctx context.Context, l Launch, read func(off int64) *redis.ZSliceCmd) ([]redis.Z, error) {
	var out []redis.Z
	for off := int64(0); ; off += eventPage {
		zs, err := read(off).Result()
		if err != nil {
			return nil, fmt.Errorf("harvest statistics: events of %s: %w", l, err)
		}
		out = append(out, zs...)
		if len(zs) < eventPage {
			return out, nil
		}
	}
}

// EventCount is about how many events Events(all) passes for the launch:
// those that name it, and all of its source's that name no launch (an
// upper bound for those of its time window).
func (s *Store) EventCount(ctx context.Context, l Launch) (int64, error) {
	pipe := s.rdb.Pipeline()
	unnamed := pipe.ZCard(ctx, s.srcKey(l.Source, "ev"))
	own := pipe.ZCard(ctx, s.srcKey(l.Source, "e:"+l.Timestamp))
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("harvest statistics: events of %s: %w", l, err)
	}
	return unnamed.Val() + own.Val(), nil
}

// Active is a launch not yet sealed.
type Active struct {
	Launch Launch
	// LastActivity is when the store last recorded an event of the launch
	// (Named), else of its source.
	LastActivity time.Time
	// Superseded: a later launch of the same source has begun.
	Superseded bool
	// Named: the launch's events name it (extra_info launchId), so its
	// URIs still crawled after a later launch began keep counting in it.
	// A launch known only by time ends when the next one begins.
	Named bool
}

// Active lists the launches not sealed yet.
func (s *Store) Active(ctx context.Context) ([]Active, error) {
	srcs, err := s.rdb.ZRangeWithScores(ctx, s.prefix+"srcs", 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("harvest statistics: sources: %w", err)
	}
	sealed, err := s.rdb.HGetAll(ctx, s.prefix+"sealed").Result()
	if err != nil {
		return nil, fmt.Errorf("harvest statistics: sealed launches: %w", err)
	}
	act, err := s.rdb.HGetAll(ctx, s.prefix+"act").Result()
	if err != nil {
		return nil, fmt.Errorf("harvest statistics: launch activity: %w", err)
	}
	names := make([]string, len(srcs))
	for i, z := range srcs {
		names[i] = z.Member.(string)
	}
	launches, err := s.launchesOfAll(ctx, names)
	if err != nil {
		return nil, err
	}
	var out []Active
	for j, z := range srcs {
		src := names[j]
		ls := launches[j]
		for i, ts := range ls {
			l := Launch{Source: src, Timestamp: ts}
			if _, ok := sealed[l.Key()]; ok {
				continue
			}
			a := Active{Launch: l, LastActivity: time.UnixMilli(int64(z.Score)).UTC(), Superseded: i+1 < len(ls)}
			if ms, err := strconv.ParseInt(act[l.Key()], 10, 64); err == nil {
				a.LastActivity, a.Named = time.UnixMilli(ms).UTC(), true
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// ErrUnknownLaunch is returned for a launch the store has no event of.
var ErrUnknownLaunch = errors.New("harvest statistics: unknown launch")

// Stats returns a launch's statistics. A sealed launch is reported in the
// state it was sealed with; an active one as running; one whose
// provenance is written as it was then.
func (s *Store) Stats(ctx context.Context, l Launch) (LaunchStats, error) {
	if js, err := s.rdb.HGet(ctx, s.prefix+"stats", l.Key()).Result(); err == nil {
		var st LaunchStats
		if err := json.Unmarshal([]byte(js), &st); err != nil {
			return LaunchStats{}, fmt.Errorf("harvest statistics of %s: stored: %w", l, err)
		}
		return st, nil
	} else if !errors.Is(err, redis.Nil) {
		return LaunchStats{}, fmt.Errorf("harvest statistics of %s: %w", l, err)
	}
	counts, err := s.counted(ctx, l)
	if err != nil {
		return LaunchStats{}, err
	}
	// Events that name no launch are counted now (in the rare launch that
	// has both kinds, a URL in both counts twice).
	evs, err := s.window(ctx, l, true, false)
	if err != nil {
		return LaunchStats{}, err
	}
	for i := range evs {
		tally(counts, Domain(&evs[i]), &evs[i])
	}
	if len(counts) == 0 {
		return LaunchStats{}, fmt.Errorf("%w %s", ErrUnknownLaunch, l)
	}
	state, err := s.rdb.HGet(ctx, s.prefix+"sealed", l.Key()).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return LaunchStats{}, fmt.Errorf("harvest statistics of %s: %w", l, err)
	}
	if state == "" {
		state = StateRunning
	}
	return fromCounts(s.crawl, l, state, counts), nil
}

// Build makes the statistics of a launch in state from its events, each
// URL counted once.
func Build(crawl string, l Launch, state string, events []messages.Crawled) LaunchStats {
	counts := map[string]int64{}
	for i := range events {
		tally(counts, Domain(&events[i]), &events[i])
	}
	return fromCounts(crawl, l, state, counts)
}

// fromCounts makes the statistics of a launch in state from its counts.
func fromCounts(crawl string, l Launch, state string, counts map[string]int64) LaunchStats {
	domains := decode(counts)
	decide(domains, state)
	return LaunchStats{Crawl: crawl, Launch: l, State: state, Domains: domains, Totals: total(domains)}
}

// Events calls fn with every event the launch counts, in time order; with
// all, also a URL's later events (retries, recrawls), which crawl.log has
// lines for.
func (s *Store) Events(ctx context.Context, l Launch, all bool, fn func(messages.Crawled) error) error {
	evs, err := s.window(ctx, l, !all, true)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if err := fn(ev); err != nil {
			return err
		}
	}
	return nil
}

// Seal ends a launch in state (completed, terminated, running at crawl
// end, or the limit that ended the crawl): it is no longer active and its
// statistics report state from now on.
func (s *Store) Seal(ctx context.Context, l Launch, state string) error {
	if err := s.rdb.HSet(ctx, s.prefix+"sealed", l.Key(), state).Err(); err != nil {
		return fmt.Errorf("harvest statistics: seal %s: %w", l, err)
	}
	return nil
}

// Launches lists every launch the store knows, sealed or not, with its
// state.
func (s *Store) Launches(ctx context.Context) (map[Launch]string, error) {
	out := map[Launch]string{}
	act, err := s.Active(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range act {
		out[a.Launch] = StateRunning
	}
	sealed, err := s.rdb.HGetAll(ctx, s.prefix+"sealed").Result()
	if err != nil {
		return nil, fmt.Errorf("harvest statistics: sealed launches: %w", err)
	}
	for k, st := range sealed {
		if l, err := ParseKey(k); err == nil {
			out[l] = st
		}
	}
	return out, nil
}

// MarkDone records that the launch's provenance (metadata WARC) was
// written as file, so a restart does not write it again, keeps stats (its
// statistics as written, JSON) and drops the events that name the launch:
// Redis holds the events of unfinished launches only.
func (s *Store) MarkDone(ctx context.Context, l Launch, file string, stats []byte) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, s.prefix+"done", l.Key(), file)
		p.HSet(ctx, s.prefix+"stats", l.Key(), stats)
		p.ZAdd(ctx, s.prefix+"donet", redis.Z{Score: float64(s.now().UnixMilli()), Member: l.Key()})
		p.Del(ctx, s.seenKey(l), s.countsKey(l))
		if l.Timestamp != "" {
			p.Del(ctx, s.srcKey(l.Source, "e:"+l.Timestamp))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("harvest statistics: mark %s done: %w", l, err)
	}
	return nil
}

// Done returns the file recorded by MarkDone, "" when none.
func (s *Store) Done(ctx context.Context, l Launch) (string, error) {
	f, err := s.rdb.HGet(ctx, s.prefix+"done", l.Key()).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("harvest statistics: done %s: %w", l, err)
	}
	return f, nil
}

// Sealed lists the sealed launches whose provenance is not done: those a
// crash stopped between sealing and writing.
func (s *Store) Sealed(ctx context.Context) (map[Launch]string, error) {
	sealed, err := s.rdb.HGetAll(ctx, s.prefix+"sealed").Result()
	if err != nil {
		return nil, fmt.Errorf("harvest statistics: sealed launches: %w", err)
	}
	done, err := s.rdb.HGetAll(ctx, s.prefix+"done").Result()
	if err != nil {
		return nil, fmt.Errorf("harvest statistics: done launches: %w", err)
	}
	out := map[Launch]string{}
	for k, st := range sealed {
		if _, ok := done[k]; ok {
			continue
		}
		if l, err := ParseKey(k); err == nil {
			out[l] = st
		}
	}
	return out, nil
}

// Text renders statistics as the report file harvest-statistics.txt: one
// line per domain, NetarchiveSuite's columns.
func (st LaunchStats) Text() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# crawl %s source %s launch %s state %s\n", st.Crawl, st.Launch.Source, orDash(st.Launch.Timestamp), st.State)
	b.WriteString("# domain uris novel-objects novel-bytes duplicate-objects duplicate-bytes first-fetch last-fetch stop-reason by-status\n")
	for _, d := range append(append([]DomainStats{}, st.Domains...), st.Totals) {
		name, reason := d.Domain, d.StopReason.String()
		if name == "" {
			name, reason = "TOTAL", "-"
		}
		fmt.Fprintf(&b, "%s %d %d %d %d %d %s %s %s %s\n", name, d.URIs, d.NovelObjects, d.NovelBytes,
			d.DuplicateObject, d.DuplicateBytes, fmtTime(d.FirstFetch), fmtTime(d.LastFetch), strings.ReplaceAll(reason, " ", "_"), byStatus(d.ByStatus))
	}
	return []byte(b.String())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return messages.FormatTimestamp(t)
}

func byStatus(m map[string]int64) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + strconv.FormatInt(m[k], 10)
	}
	return strings.Join(parts, ",")
}
