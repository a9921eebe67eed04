package frontier

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Claim is a URI handed to a worker under a lease. The worker renews the
// lease while it works and settles it with Complete (or Release).
type Claim struct {
	// Host is the queue: the URL's authority (host[:port]).
	Host string
	// Launch is the URI with everything it inherits.
	Launch messages.Launch
	// Retries counts earlier attempts that ended in a retry.
	Retries int
	// Interrupted: an earlier claim of this URI ended without completing
	// (a crashed worker, a shutdown), so its work may be half done: the
	// worker journals the URI's outlinks again even when they are already
	// queued, since the interrupted attempt may have queued them without
	// journaling them.
	Interrupted bool
	// Usage is what the URI's server, host and source had fetched when it
	// was claimed, for Policy.OverQuota.
	Usage Usages
	// BackOffs counts the host's back-offs in a row (429, 503) when it
	// was claimed, and BackOffUntil is when the last one ended, for
	// Policy.DecideThrottle.
	BackOffs     int
	BackOffUntil time.Time

	lease string
	shard int
}

// Lease identifies the claim's lease, for logs.
func (c *Claim) Lease() string { return c.lease }

// claimFields is the number of reply fields per claim (see claim.lua).
const claimFields = 17

// Idle is the wait Claim reports when no host has anything queued.
const Idle = time.Duration(-1)

// Claimant names a worker claiming URIs, so that the frontier shares the
// ready hosts fairly among the workers that claim from it (fair.lua,
// docs/frontier.md "Fair claims").
type Claimant struct {
	// ID is unique among the live workers of the frontier (the worker's
	// identity); "" claims without taking part in fair shares.
	ID string
	// Hungry is how many URIs a claim may leave unmet before the claimant
	// counts as wanting more, and is owed hosts that others are ahead on:
	// the worker claims again once that many of its slots are free
	// (default 1).
	Hungry int
}

// The times of fair shares. A claimant that has not claimed for
// fairWindow is forgotten (a stopped worker holds nobody back for
// longer); a hungry claimant sharing the frontier asks again within
// fairPoll, so a host left for it waits about that long; a host ready for
// longer than fairGrace goes to whoever asks, owed or not.
const (
	fairWindow = 2 * time.Second
	fairPoll   = 50 * time.Millisecond
	fairGrace  = time.Second
)

// Claim leases up to n URIs, at most one per ready host, visiting the
// shards in turn, for no claimant in particular (see ClaimAs).
func (f *Frontier) Claim(ctx context.Context, n int, lease time.Duration) (claims []*Claim, wait time.Duration, err error) {
	return f.ClaimAs(ctx, Claimant{}, n, lease)
}

// ClaimAs leases up to n URIs for who, at most one per ready host,
// visiting the shards in turn; a host owed to another claimant with a
// smaller share is left to it for a moment (fair.lua). wait says when to
// ask again when fewer than n came back: 0 when hosts are ready now, the
// time until the next host is ready (or, for a claimant owed hosts, until
// it should look again), or Idle when nothing is queued at all. It fails
// only when it leased nothing: a shard failing after others gave URIs is
// logged and the URIs are returned.
func (f *Frontier) ClaimAs(ctx context.Context, who Claimant, n int, lease time.Duration) (claims []*Claim, wait time.Duration, err error) {
	if n < 1 {
		return nil, 0, fmt.Errorf("frontier %s claim: n %d must be >= 1", f.name, n)
	}
	start := int(f.rotate.Add(1))
	wait = Idle
	withheld := false // hosts were left ready for other claimants
	for i := range f.prefixes {
		s := (start + i) % len(f.prefixes)
		now := f.now()
		got, next, owed, err := f.claimShard(ctx, who, s, n-len(claims), now, lease)
		if err != nil && len(claims) > 0 {
			// A shard on a master that is away: the URIs leased on the
			// other shards go to work rather than wait for their leases
			// to expire; the failing shard is asked again next time.
			f.log.Warn("frontier claim: a shard failed; the others' URIs are returned", "frontier", f.name, "shard", s, "err", err)
			break
		}
		if err != nil {
			return nil, 0, err
		}
		withheld = withheld || owed
		claims = append(claims, got...)
		if next >= 0 {
			w := max0(time.UnixMilli(next).Sub(now))
			if wait == Idle || w < wait {
				wait = w
			}
		}
		if len(claims) >= n {
			break
		}
	}
	if len(claims) > 0 && !withheld {
		wait = 0
	}
	return claims, wait, nil
}

func max0(d time.Duration) time.Duration { return max(d, 0) }

// claimShard claims up to n URIs from one shard, and unpacks the blocks
// the claim met at the heads of queues (blocks.go): a host with a block
// at its head gave nothing and is claimed at the next call.
func (f *Frontier) claimShard(ctx context.Context, who Claimant, s, n int, now time.Time, lease time.Duration) (
	[]*Claim, int64, bool, error) {
	args := []any{ms(now), ms(now.Add(lease)), n, who.ID, max(who.Hungry, 1),
		fairWindow.Milliseconds(), fairPoll.Milliseconds(), fairGrace.Milliseconds()}
	replies, err := f.runAll(ctx, f.sc.claim, []call{{shard: s, args: args}})
	if err != nil {
		return nil, 0, false, fmt.Errorf("frontier %s claim: %w", f.name, err)
	}
	claims, next, owed, heads := f.parseClaims(ctx, s, replies[0])
	if len(heads) > 0 {
		if err := f.unpackHeads(ctx, s, heads); err != nil {
			f.log.Warn("frontier: queue blocks not unpacked", "frontier", f.name, "shard", s, "err", err)
		}
	}
	return claims, next, owed, nil
}

// parseClaims decodes a claim reply: the claims, the next ready time,
// whether hosts were left ready for other claimants (the time prefixed
// "w", fair.lua) and the blocks met at queue heads (entries without a
// lease: the queue and the block). An entry that cannot be decoded (a
// corrupt queue item) is finished as illegal (-7) so its host is not
// stuck, and reported to the logger.
func (f *Frontier) parseClaims(ctx context.Context, shard int, reply any) ([]*Claim, int64, bool, []headBlock) {
	vals, _ := reply.([]any)
	if len(vals) == 0 {
		return nil, -1, false, nil
	}
	var heads []headBlock
	first := toString(vals[0])
	withheld := strings.HasPrefix(first, "w")
	next := toInt(strings.TrimPrefix(first, "w"))
	var out []*Claim
	ctxs := ctxCache{}
	for i := 1; i+claimFields <= len(vals); i += claimFields {
		v := vals[i : i+claimFields]
		if toString(v[0]) == "" {
			heads = append(heads, headBlock{key: toString(v[1]), block: toString(v[2]),
				holding: toInt(v[3]) > 0, busy: toInt(v[4]) > 1})
			continue
		}
		c, err := decodeClaim(ctxs, toString(v[0]), toString(v[1]), toString(v[2]))
		if err != nil {
			f.log.Error("corrupt frontier entry finished as illegal (-7)", "frontier", f.name, "lease", toString(v[0]), "err", err)
			c = &Claim{lease: toString(v[0])}
			c.shard = shard
			_, _ = f.Complete(context.WithoutCancel(ctx), []Outcome{{Claim: c, Status: -7, NotFetched: true}})
			continue
		}
		c.shard = shard
		c.Usage = Usages{
			Server: Usage{toInt(v[3]), toInt(v[4]), toInt(v[5]), toInt(v[6])},
			Host:   Usage{toInt(v[7]), toInt(v[8]), toInt(v[9]), toInt(v[10])},
			Source: Usage{toInt(v[11]), toInt(v[12]), toInt(v[13]), toInt(v[14])},
		}
		if c.BackOffs = int(toInt(v[15])); c.BackOffs > 0 {
			c.BackOffUntil = time.UnixMilli(toInt(v[16]))
		}
		out = append(out, c)
	}
	return out, next, withheld, heads
}

func decodeClaim(ctxs ctxCache, lease, raw, blob string) (*Claim, error) {
	host, _, ok := cutLast(lease, " ")
	if !ok || host == "" {
		return nil, fmt.Errorf("lease %q has no host", lease)
	}
	it, err := parseItem(raw)
	if err != nil {
		return nil, err
	}
	c := &Claim{Host: host, Retries: it.retries, Interrupted: it.interrupted, lease: lease}
	if err := decodePayload(it.payload, host, &c.Launch); err != nil {
		return nil, err
	}
	if err := ctxs.decode(blob, &c.Launch); err != nil {
		return nil, err
	}
	return c, nil
}

func cutLast(s, sep string) (before, after string, ok bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// Outcome is the result of working on a claimed URI.
type Outcome struct {
	Claim *Claim
	// Status is the fetch status (Heritrix codes).
	Status int
	// Bytes is the size on the wire, for quotas, totals and the bandwidth
	// cap.
	Bytes int64
	// Duration of the fetch, for the politeness delay.
	Duration time.Duration
	// NotFetched: the host was not contacted (quota, blocked), so no
	// politeness delay follows.
	NotFetched bool
	// Revisit marks a URI written as a revisit (duplicate:digest,
	// server-not-modified): it does not count as novel for maxNovelUrls
	// and maxNovelBytes.
	Revisit bool
	// CrawlDelay is the host's robots.txt Crawl-delay when
	// CrawlDelayKnown; otherwise the delay stored for the host applies.
	CrawlDelay      time.Duration
	CrawlDelayKnown bool
	// Policy holds the URI's effective settings.
	Policy Policy
	// Decision, when set, is used instead of Policy.Decide: a failed
	// prerequisite (DNS, robots.txt) retries like a fetch failure but
	// finishes with its own status (-6, -61) rather than -8; a deferral or
	// a back-off with the server's Retry-After. Without it a 429 or 503
	// gets Policy.DecideThrottle with no Retry-After.
	Decision *Decision
}

// Complete settles a batch of claims: each URI finishes, or goes back to
// its queue for a retry when Policy.Decide says so, and its host becomes
// ready again after the politeness delay. The result says, per outcome,
// whether the lease was still held; false means it had expired and the
// URI was already returned to the frontier (it will be crawled again).
func (f *Frontier) Complete(ctx context.Context, outs []Outcome) ([]bool, error) {
	return f.settle(ctx, outs, false)
}

// Release returns claimed URIs to the front of their queues uncharged and
// frees their hosts at once: for work interrupted by shutdown or a local
// failure.
func (f *Frontier) Release(ctx context.Context, claims []*Claim) error {
	outs := make([]Outcome, len(claims))
	for i, c := range claims {
		outs[i] = Outcome{Claim: c}
	}
	_, err := f.settle(ctx, outs, true)
	return err
}

func (f *Frontier) settle(ctx context.Context, outs []Outcome, release bool) ([]bool, error) {
	res := make([]bool, len(outs))
	if len(outs) == 0 {
		return res, nil
	}
	byShard := map[int][]int{}
	var order []int
	for i, o := range outs {
		if o.Claim == nil || o.Claim.lease == "" {
			return nil, fmt.Errorf("frontier %s complete: outcome %d has no claim", f.name, i)
		}
		s := o.Claim.shard
		if _, ok := byShard[s]; !ok {
			order = append(order, s)
		}
		byShard[s] = append(byShard[s], i)
	}
	now := ms(f.now())
	calls := make([]call, len(order))
	for j, s := range order {
		args := []any{now, f.mode}
		for _, i := range byShard[s] {
			args = append(args, outcomeArgs(outs[i], release, f.now())...)
		}
		calls[j] = call{shard: s, args: args}
	}
	replies, err := f.runAll(ctx, f.sc.complete, calls)
	if err != nil {
		return nil, fmt.Errorf("frontier %s complete: %w", f.name, err)
	}
	for j, s := range order {
		vals, _ := replies[j].([]any)
		if len(vals) != len(byShard[s]) {
			return nil, fmt.Errorf("frontier %s complete: %d replies for %d outcomes", f.name, len(vals), len(byShard[s]))
		}
		for k, i := range byShard[s] {
			res[i] = toInt(vals[k]) == 1
		}
	}
	return res, nil
}

func outcomeArgs(o Outcome, release bool, now time.Time) []any {
	if release {
		return []any{o.Claim.lease, "u", 0, 0, 0, -1, 0, 0, 1, ""}
	}
	var d Decision
	switch {
	case o.Decision != nil:
		d = *o.Decision
	case Throttled(o.Status) && !o.NotFetched:
		d = o.Policy.DecideThrottle(o.Claim, o.Status, 0, now)
	default:
		d = o.Policy.Decide(o.Status, o.Claim.Retries)
	}
	kind := "f"
	switch {
	case d.Retry && d.Defer:
		kind = "d"
	case d.Retry:
		kind = "r"
	case o.Revisit:
		kind = "v" // finished, not novel (settle.lua)
	}
	pol := o.Policy.Politeness
	delay, cd, cdCap := baseDelay(pol, o.Duration, o.Bytes, o.Policy.Frontier.MaxPerHostBandwidthUsageKbSec), int64(-1), crawlDelayCap(pol)
	if o.CrawlDelayKnown {
		cd = o.CrawlDelay.Milliseconds()
	}
	if o.NotFetched {
		delay, cdCap = 0, 0
	}
	delay = max(delay, d.Wait)
	retry := time.Duration(o.Policy.Frontier.RetryDelaySeconds) * time.Second
	return []any{o.Claim.lease, kind, d.Status, max(o.Bytes, 0), delay.Milliseconds(), cd, cdCap.Milliseconds(),
		retry.Milliseconds(), max(1, o.Policy.Frontier.ParallelQueues), backOffArg(d, pol)}
}

// Renew extends the leases of claims still being worked on, one script
// call per shard. It returns the claims whose lease had already expired:
// their URIs are back in the frontier and the work on them is void.
func (f *Frontier) Renew(ctx context.Context, claims []*Claim, lease time.Duration) ([]*Claim, error) {
	if len(claims) == 0 {
		return nil, nil
	}
	until := ms(f.now().Add(lease))
	byShard := map[int][]*Claim{}
	var order []int
	for _, c := range claims {
		if _, ok := byShard[c.shard]; !ok {
			order = append(order, c.shard)
		}
		byShard[c.shard] = append(byShard[c.shard], c)
	}
	calls := make([]call, len(order))
	for j, s := range order {
		args := []any{until}
		for _, c := range byShard[s] {
			args = append(args, c.lease)
		}
		calls[j] = call{shard: s, args: args}
	}
	replies, err := f.runAll(ctx, f.sc.renew, calls)
	if err != nil {
		return nil, fmt.Errorf("frontier %s renew: %w", f.name, err)
	}
	var lost []*Claim
	for j, s := range order {
		vals, _ := replies[j].([]any)
		for _, v := range vals {
			if k := int(toInt(v)) - 1; k >= 0 && k < len(byShard[s]) {
				lost = append(lost, byShard[s][k])
			}
		}
	}
	return lost, nil
}

// reapBatch bounds the leases one reap call returns, so a script never
// runs long.
const reapBatch = 500

// Reap returns the URIs of expired leases (crashed workers) to the front
// of their queues without charging a retry. It returns how many.
func (f *Frontier) Reap(ctx context.Context) (int, error) {
	return f.reap(ctx, false)
}

// ReleaseAll returns every leased URI at once, expired or not. Only for a
// frontier no live worker shares (the standalone embedded Redis at start).
func (f *Frontier) ReleaseAll(ctx context.Context) (int, error) {
	return f.reap(ctx, true)
}

func (f *Frontier) reap(ctx context.Context, all bool) (int, error) {
	total := 0
	for s := range f.prefixes {
		for {
			now := ms(f.now())
			cutoff := any(now)
			if all {
				cutoff = "+inf"
			}
			replies, err := f.runAll(ctx, f.sc.reap, []call{{shard: s, args: []any{now, cutoff, reapBatch}}})
			if err != nil {
				return total, fmt.Errorf("frontier %s reap: %w", f.name, err)
			}
			n := int(toInt(replies[0]))
			total += n
			if n < reapBatch {
				break
			}
		}
	}
	return total, nil
}

// errNoHost reports an operation on a host the frontier never saw.
var errNoHost = errors.New("unknown host")
