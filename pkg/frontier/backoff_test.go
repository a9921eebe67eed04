package frontier

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	date := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	for _, tc := range []struct {
		name, v string
		limit   time.Duration
		want    time.Duration
		ok      bool
	}{
		{"delta-seconds", "3", time.Hour, 3 * time.Second, true},
		{"spaces", " 5 ", time.Hour, 5 * time.Second, true},
		{"missing", "", time.Hour, 0, false},
		{"malformed", "soon", time.Hour, 0, false},
		{"fraction", "1.5", time.Hour, 0, false},
		{"negative", "-5", time.Hour, 0, false},
		{"zero", "0", time.Hour, 0, false},
		{"over the cap", "7200", time.Hour, time.Hour, true},
		{"huge", "99999999999999999999999", time.Hour, time.Hour, true},
		{"just over int64 seconds", "9223372036854775808", time.Hour, time.Hour, true},
		{"no cap allowed", "3", 0, 0, false},
		{"HTTP-date", date(10 * time.Second), time.Hour, 10 * time.Second, true},
		{"HTTP-date in the past", date(-time.Minute), time.Hour, 0, false},
		{"HTTP-date far ahead", date(1000 * time.Hour), time.Hour, time.Hour, true},
		{"RFC 850 date", now.Add(20 * time.Second).Format("Monday, 02-Jan-06 15:04:05 GMT"), time.Hour, 20 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := RetryAfter(tc.v, now, tc.limit)
			if d != tc.want || ok != tc.ok {
				t.Fatalf("RetryAfter(%q) = %v, %v; want %v, %v", tc.v, d, ok, tc.want, tc.ok)
			}
		})
	}
}

// backOffPolicy backs off from 1 s doubling up to 8 s, with three
// uncharged back-offs in a row and no politeness delay.
func backOffPolicy() Policy {
	p := testPolicy()
	p.Frontier.MaxRetries = 3
	p.Politeness.BackOffBaseMs, p.Politeness.BackOffMaxMs = 1000, 8000
	p.Politeness.MaxRetryAfterSeconds = 3600
	return p
}

func TestDecideThrottle(t *testing.T) {
	now := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	pol := backOffPolicy()
	for _, tc := range []struct {
		name     string
		c        Claim
		want     Decision
		charged  bool
		finished bool
	}{
		{"first back-off", Claim{}, Decision{Retry: true, Defer: true, Status: 503, Attempts: 1, Throttle: 503}, false, false},
		{"below the bound", Claim{BackOffs: 2, BackOffUntil: now}, Decision{Retry: true, Defer: true, Status: 503, Attempts: 1, Throttle: 503}, false, false},
		{"past the bound: charged", Claim{BackOffs: 3, BackOffUntil: now}, Decision{Retry: true, Status: 503, Attempts: 1, Throttle: 503}, true, false},
		{"past the bound, retries spent: -8", Claim{BackOffs: 5, BackOffUntil: now, Retries: 3},
			Decision{Status: StatusRetriesExhausted, Attempts: 4, Throttle: 503}, true, true},
		{"not forgiven for waiting its politeness delay", Claim{BackOffs: 9, BackOffUntil: now.Add(-9 * time.Second)},
			Decision{Retry: true, Status: 503, Attempts: 1, Throttle: 503}, true, false},
		{"forgiven after a quiet spell", Claim{BackOffs: 9, BackOffUntil: now.Add(-25 * time.Hour)},
			Decision{Retry: true, Defer: true, Status: 503, Attempts: 1, Throttle: 503}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pol.DecideThrottle(&tc.c, 503, 0, now)
			mustEqual(t, "decision", got, tc.want)
		})
	}
	d := pol.DecideThrottle(&Claim{}, 429, 3*time.Second, now)
	mustEqual(t, "retry-after kept", d.RetryAfter, 3*time.Second)
}

func hostInfo(t *testing.T, f *Frontier, host string) HostInfo {
	t.Helper()
	h, err := f.Host(context.Background(), host)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// claimAt checks that host h gives nothing just before at and its URI at
// at (the clock is moved there).
func claimAt(t *testing.T, f *Frontier, ck *clock, at time.Time) *Claim {
	t.Helper()
	ck.add(at.Sub(ck.now()) - time.Millisecond)
	if cs := claim(t, f, 1); len(cs) != 0 {
		t.Fatalf("claimed %s at %v, %v before the back-off ends", cs[0].Launch.URL, ck.now(), time.Millisecond)
	}
	ck.add(time.Millisecond)
	cs := claim(t, f, 1)
	if len(cs) != 1 {
		t.Fatalf("nothing claimable when the back-off ended at %v", at)
	}
	return cs[0]
}

// A 503 without Retry-After backs the host off exponentially with jitter,
// capped; the URI comes back uncharged until the host has backed off
// maxRetries times in a row; stats, the host's state and the counters
// show it; the state is in Redis, so another Frontier (a restarted
// worker) sees it; an ordinary response forgives the host.
func TestBackOffExponential(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		ctx := context.Background()
		pol := backOffPolicy()
		admit(t, f, cand("h", "/a", "", true), cand("h", "/b", "", true))
		c := claim(t, f, 1)[0]
		// Expected wait ranges (equal jitter) per back-off in a row.
		lo := []time.Duration{500, 1000, 2000, 4000, 4000}
		hi := []time.Duration{1000, 2000, 4000, 8000, 8000}
		for i := range lo {
			if _, err := f.Complete(ctx, []Outcome{{Claim: c, Status: 503, Duration: time.Millisecond, Policy: pol}}); err != nil {
				t.Fatal(err)
			}
			h := hostInfo(t, f, "h")
			wait := h.BackOffUntil.Sub(ck.now())
			if h.BackOffs != i+1 || h.BackOffStatus != 503 || wait < lo[i]*time.Millisecond || wait > hi[i]*time.Millisecond {
				t.Fatalf("back-off %d: %d in a row, status %d, wait %v; want %d, 503, %v..%v ms", i+1, h.BackOffs, h.BackOffStatus, wait, i+1, lo[i], hi[i])
			}
			st := stats(t, f)
			if st.BackingOffHosts != 1 || st.BackOffs503 != int64(i+1) || st.Queued != 2 {
				t.Fatalf("back-off %d: stats %+v", i+1, st)
			}
			if i == 1 {
				// A restarted worker: a new Frontier on the same Redis
				// still waits for the back-off.
				f = newTestFrontier(t, rdb, ck, Options{})
			}
			// A charged back-off waits retryDelaySeconds (10 s) when longer.
			c = claimAt(t, f, ck, h.NextFetch)
			mustEqual(t, "same URI back first", c.Launch.URL, "http://h/a")
			mustEqual(t, "back-offs the claim carries", c.BackOffs, i+1)
			// Uncharged while the host had backed off fewer than
			// maxRetries (3) times in a row, then charged.
			mustEqual(t, "retries", c.Retries, max(0, i-2))
		}
		tot := totals(t, f)
		if tot.URIs != 0 || tot.Retries != 2 {
			t.Fatalf("totals %+v: want nothing finished and two charged retries", tot)
		}
		finish(t, f, c)
		h := hostInfo(t, f, "h")
		if h.BackOffs != 0 || !h.BackOffUntil.IsZero() || stats(t, f).BackingOffHosts != 0 {
			t.Fatalf("a 200 did not forgive the host: %+v", h)
		}
		mustEqual(t, "counter kept", stats(t, f).BackOffs503, int64(5))
	})
}

// A 429 with Retry-After holds the host for exactly that long (no jitter);
// a host claimed again later than backOffMaxMs after its back-off (as a
// long politeness delay makes it) keeps its count, so the bound on
// uncharged deferrals holds; a host quiet for a day starts from the base
// wait again.
func TestBackOffRetryAfterAndQuietSpell(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		ctx := context.Background()
		pol := backOffPolicy()
		admit(t, f, cand("h", "/a", "", true))
		c := claim(t, f, 1)[0]
		d := pol.DecideThrottle(c, 429, 3*time.Second, ck.now())
		if _, err := f.Complete(ctx, []Outcome{{Claim: c, Status: 429, Policy: pol, Decision: &d}}); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "429 counted", stats(t, f).BackOffs429, int64(1))
		c = claimAt(t, f, ck, ck.now().Add(3*time.Second))
		for range 2 {
			if _, err := f.Complete(ctx, []Outcome{{Claim: c, Status: 503, Policy: pol}}); err != nil {
				t.Fatal(err)
			}
			c = claimAt(t, f, ck, hostInfo(t, f, "h").BackOffUntil)
		}
		mustEqual(t, "in a row", c.BackOffs, 3)
		ck.add(8*time.Second + time.Millisecond) // longer than backOffMaxMs, as a politeness delay can be
		if d := pol.DecideThrottle(c, 503, 0, ck.now()); d.Defer {
			t.Fatalf("a host claimed after backOffMaxMs had its count reset: %+v", d)
		}
		ck.add(24 * time.Hour) // a quiet spell
		if d := pol.DecideThrottle(c, 503, 0, ck.now()); !d.Defer {
			t.Fatalf("a host quiet for a day still charged: %+v", d)
		}
		if _, err := f.Complete(ctx, []Outcome{{Claim: c, Status: 503, Policy: pol}}); err != nil {
			t.Fatal(err)
		}
		h := hostInfo(t, f, "h")
		if wait := h.BackOffUntil.Sub(ck.now()); h.BackOffs != 1 || wait < 500*time.Millisecond || wait > time.Second {
			t.Fatalf("after a quiet spell: %d in a row, wait %v; want 1, 0.5..1 s", h.BackOffs, wait)
		}
	})
}

// A deferral (after a prerequisite) puts the URI back at the head of its
// queue uncharged, after the politeness delay of the prerequisite's fetch,
// and finishes nothing.
func TestDefer(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		pol := testPolicy()
		pol.Politeness.DelayFactor, pol.Politeness.MaxDelayMs = 5, 10000
		admit(t, f, cand("h", "/a", "", true), cand("h", "/b", "", true))
		c := claim(t, f, 1)[0]
		d := Decision{Retry: true, Defer: true, Status: StatusDeferred, Attempts: 1}
		if _, err := f.Complete(context.Background(), []Outcome{{Claim: c, Status: StatusDeferred, Duration: 100 * time.Millisecond,
			Policy: pol, Decision: &d}}); err != nil {
			t.Fatal(err)
		}
		c = claimAt(t, f, ck, ck.now().Add(500*time.Millisecond))
		mustEqual(t, "deferred URI first", c.Launch.URL, "http://h/a")
		mustEqual(t, "uncharged", c.Retries, 0)
		mustEqual(t, "not interrupted", c.Interrupted, false)
		tot := totals(t, f)
		if tot.URIs != 0 || tot.Retries != 0 {
			t.Fatalf("totals after a deferral %+v", tot)
		}
		mustEqual(t, "no back-off", hostInfo(t, f, "h").BackOffs, 0)
	})
}

// A deferral with a Wait (a worker's back-off after a capture it could
// not record) keeps the host waiting the longer of Wait and its politeness
// delay, even when the host was not contacted; the URI comes back
// uncharged and nothing is kept as the host's back-off.
func TestDeferWait(t *testing.T) {
	tests := []struct {
		name       string
		wait       time.Duration
		notFetched bool
		want       time.Duration // from the completion to the next claim
	}{
		{"politeness only", 0, false, 500 * time.Millisecond},
		{"wait longer than politeness", 2 * time.Second, false, 2 * time.Second},
		{"wait shorter than politeness", 100 * time.Millisecond, false, 500 * time.Millisecond},
		{"wait without contact", 2 * time.Second, true, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, rdb *redis.Client) {
				ck := newClock()
				f := newTestFrontier(t, rdb, ck, Options{})
				pol := testPolicy()
				pol.Politeness.DelayFactor, pol.Politeness.MaxDelayMs = 5, 10000
				admit(t, f, cand("h", "/a", "", true), cand("h", "/b", "", true))
				c := claim(t, f, 1)[0]
				d := Decision{Retry: true, Defer: true, Status: StatusDeferred, Attempts: 1, Wait: tt.wait}
				if _, err := f.Complete(context.Background(), []Outcome{{Claim: c, Status: StatusDeferred, Duration: 100 * time.Millisecond,
					NotFetched: tt.notFetched, Policy: pol, Decision: &d}}); err != nil {
					t.Fatal(err)
				}
				c = claimAt(t, f, ck, ck.now().Add(tt.want))
				mustEqual(t, "deferred URI first", c.Launch.URL, "http://h/a")
				mustEqual(t, "uncharged", c.Retries, 0)
				mustEqual(t, "no back-off", hostInfo(t, f, "h").BackOffs, 0)
			})
		})
	}
}
