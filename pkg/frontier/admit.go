package frontier

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// Candidate is a URI offered to the frontier, after scope.
type Candidate struct {
	// Launch is the URI with everything it inherits (the inscope schema).
	Launch messages.Launch
	// Policy holds the URI's effective settings.
	Policy Policy
	// Key is the seen-filter key; empty means the SURT CDX key of the URL.
	Key string
	// LastCrawled is when the URI was last crawled, from the
	// recently-crawled DB; zero if unknown. The frontier also remembers
	// what it finished itself, so a URI finished a moment ago is not
	// admitted again before the DB has caught up.
	LastCrawled time.Time
	// AdaptiveInterval is the URI's own recrawl interval from the
	// recently-crawled DB (profile frontier.recrawlAdaptive); zero when
	// it has none. With recrawlAdaptive it replaces the recrawl interval,
	// and a launch timestamp inherited from a seed no longer makes the
	// URI due: only its own interval does (a launch's seeds and forced
	// URIs are still due at once).
	AdaptiveInterval time.Duration
	// ResetQuotas clears the quota counters of the URI's source and of its
	// host: set it for a launch carrying the resetQuotas annotation.
	ResetQuotas bool
	// JournalTime is set only by a rebuild: the time the URI was admitted
	// according to the journal. It is queued again unless it finished after
	// that time.
	JournalTime time.Time
}

// Verdict is what Admit did with a candidate.
type Verdict int

// Verdicts; the first four values are the admit script's reply codes.
const (
	// Queued: the URI is already queued or in flight.
	Queued Verdict = iota
	// Admitted: the URI was queued.
	Admitted
	// Seen: crawled within its recrawl interval, or in the Bloom filter.
	Seen
	// Reprioritised: a forceFetch candidate moved an already queued URI to
	// the front (no duplicate is queued).
	Reprioritised
	// Invalid: the candidate cannot be queued; AdmitResult.Err says why.
	Invalid
)

func (v Verdict) String() string {
	switch v {
	case Queued:
		return "queued"
	case Admitted:
		return "admitted"
	case Seen:
		return "seen"
	case Reprioritised:
		return "reprioritised"
	case Invalid:
		return "invalid"
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// AdmitResult is the verdict on one candidate.
type AdmitResult struct {
	Verdict Verdict
	Err     error // set for Invalid
}

// New reports whether the candidate was queued (and so belongs in the
// inscope journal).
func (r AdmitResult) New() bool { return r.Verdict == Admitted || r.Verdict == Reprioritised }

// prepared is a candidate turned into script arguments.
type prepared struct {
	host, uk, payload, ctxID, blob string
	source                         string // the target's tag, for status
	level                          int
	force, reset                   bool
	last, interval, launch, journ  int64
	pq                             int
	locs                           []uint64
}

func (f *Frontier) prepare(c Candidate, ctxs *ctxMemo) (prepared, error) {
	l := c.Launch
	if strings.TrimSpace(l.URL) == "" {
		return prepared{}, errors.New("candidate without URL")
	}
	host, err := hostkey.Authority(l.URL)
	if err != nil {
		return prepared{}, fmt.Errorf("candidate %q: %w", l.URL, err)
	}
	key := c.Key
	if key == "" {
		if key, err = surt.CDXKey(l.URL); err != nil {
			return prepared{}, fmt.Errorf("candidate %q: seen key: %w", l.URL, err)
		}
	}
	payload, err := encodePayload(l, host)
	if err != nil {
		return prepared{}, fmt.Errorf("candidate %q: %w", l.URL, err)
	}
	id, blob, err := ctxs.encode(&l)
	if err != nil {
		return prepared{}, fmt.Errorf("candidate %q: %w", l.URL, err)
	}
	interval := c.Policy.Frontier.RecrawlIntervalSeconds
	if l.RecrawlInterval != nil {
		interval = *l.RecrawlInterval
	}
	p := prepared{
		host: host, uk: uriKey(key), payload: payload, ctxID: id, blob: blob, source: l.Source(),
		level: Level(l, c.Policy.Frontier.PreferenceDepthHops), force: l.ForceFetch, reset: c.ResetQuotas,
		interval: interval * 1000, launch: launchMillis(l), pq: max(1, c.Policy.Frontier.ParallelQueues),
	}
	if c.AdaptiveInterval > 0 && c.Policy.Frontier.RecrawlAdaptive {
		p.interval = c.AdaptiveInterval.Milliseconds()
		if !l.IsSeed && !l.ForceFetch {
			p.launch = 0
		}
	}
	if !c.LastCrawled.IsZero() {
		p.last = ms(c.LastCrawled)
	}
	if !c.JournalTime.IsZero() {
		p.journ = ms(c.JournalTime)
	}
	if f.mode == "b" {
		p.locs = f.bloom.locations(key)
	}
	return p, nil
}

// HeldByAdaptive reports whether the candidate's adaptive recrawl
// interval keeps it back at now where its launch timestamp or the recrawl
// interval alone would have made it due: a fetch adaptive recrawl saves.
func (c Candidate) HeldByAdaptive(now time.Time) bool {
	l := c.Launch
	if c.AdaptiveInterval <= 0 || !c.Policy.Frontier.RecrawlAdaptive || c.LastCrawled.IsZero() || l.IsSeed || l.ForceFetch ||
		!c.LastCrawled.Add(c.AdaptiveInterval).After(now) {
		return false
	}
	interval := c.Policy.Frontier.RecrawlIntervalSeconds
	if l.RecrawlInterval != nil {
		interval = *l.RecrawlInterval
	}
	launch := launchMillis(l)
	return launch > 0 && ms(c.LastCrawled) < launch ||
		interval > 0 && !c.LastCrawled.Add(time.Duration(interval)*time.Second).After(now)
}

// launchMillis is the launch timestamp a URI is compared against: a seed's
// own, or an inherited one within refreshDepth hops of the seed (any depth
// when the launch sets no refreshDepth). 0 when none applies.
func launchMillis(l messages.Launch) int64 {
	t, ok := l.LaunchTime()
	if !ok {
		return 0
	}
	if rd := l.ParentURLMetadata.HeritableData.RefreshDepth; rd != nil && !l.IsSeed && len(l.HopPath()) > *rd {
		return 0
	}
	return ms(t)
}

// Admit runs the seen filter on a batch of candidates and queues those that
// pass: one script call per shard involved. Invalid candidates get the
// Invalid verdict with the reason and do not stop the batch; an error is
// returned only when Redis fails.
func (f *Frontier) Admit(ctx context.Context, cs []Candidate) ([]AdmitResult, error) {
	res := make([]AdmitResult, len(cs))
	if len(cs) == 0 {
		return res, nil
	}
	if f.mode == "b" {
		if err := f.checkBloom(ctx); err != nil {
			return nil, err
		}
	}
	type shardBatch struct {
		idx  []int
		ctx  map[string]int
		ctxs []any
		cand []any
	}
	batches := map[int]*shardBatch{}
	var order []int
	var ctxs ctxMemo
	for i, c := range cs {
		p, err := f.prepare(c, &ctxs)
		if err != nil {
			res[i] = AdmitResult{Verdict: Invalid, Err: err}
			continue
		}
		s := f.shardOf(p.host)
		b := batches[s]
		if b == nil {
			b = &shardBatch{ctx: map[string]int{}}
			batches[s] = b
			order = append(order, s)
		}
		cx, ok := b.ctx[p.ctxID]
		if !ok {
			b.ctxs = append(b.ctxs, p.ctxID, p.blob, p.source)
			cx = len(b.ctx) + 1
			b.ctx[p.ctxID] = cx
		}
		b.idx = append(b.idx, i)
		b.cand = append(b.cand, p.host, p.uk, p.level, flag(p.force), p.payload, cx,
			p.last, p.interval, p.launch, p.journ, p.pq, flag(p.reset))
		b.cand = formatLocs(p.locs, b.cand)
	}
	if len(order) == 0 {
		return res, nil
	}
	now := ms(f.now())
	calls := make([]call, len(order))
	for j, s := range order {
		b := batches[s]
		args := []any{now, f.mode, f.bloom.k, f.bloom.chunk, len(b.ctx)}
		args = append(args, b.ctxs...)
		calls[j] = call{shard: s, args: append(args, b.cand...)}
	}
	replies, err := f.runAll(ctx, f.sc.admit, calls)
	if err != nil {
		return nil, fmt.Errorf("frontier %s admit: %w", f.name, err)
	}
	for j, s := range order {
		codes, _ := replies[j].([]any)
		b := batches[s]
		if len(codes) < len(b.idx) {
			return nil, fmt.Errorf("frontier %s admit: %d verdicts for %d candidates", f.name, len(codes), len(b.idx))
		}
		for k, i := range b.idx {
			res[i] = AdmitResult{Verdict: Verdict(toInt(codes[k]))}
		}
		// After the verdicts, the queues whose tails are due for packing,
		// each with how many items the call pushed.
		if tails := codes[len(b.idx):]; len(tails) > 1 {
			due := make([]dueTail, 0, len(tails)/2)
			for k := 0; k+1 < len(tails); k += 2 {
				due = append(due, dueTail{key: toString(tails[k]), pushed: int(toInt(tails[k+1]))})
			}
			// The URIs are queued either way: a tail left plain is
			// packed at a later admission.
			if err := f.compact(ctx, s, due); err != nil {
				f.log.Warn("frontier: queue tails not packed", "frontier", f.name, "shard", s, "err", err)
			}
		}
	}
	return res, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
