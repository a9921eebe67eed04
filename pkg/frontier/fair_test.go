package frontier

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func claimAs(t *testing.T, f *Frontier, id string, n int) ([]*Claim, time.Duration) {
	t.Helper()
	cs, wait, err := f.ClaimAs(context.Background(), Claimant{ID: id, Hungry: 1}, n, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return cs, wait
}

func hostsOf(cs []*Claim) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Host)
	}
	slices.Sort(out)
	return out
}

// fairStart leaves hosts x and y each with URIs queued and ready now, and
// A level with B, which is hungry (it asked for three and got one): A may
// take one more host, not two.
func fairStart(t *testing.T, rdb *redis.Client) (*Frontier, *clock) {
	t.Helper()
	if err := rdb.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	ck := newClock()
	f := newTestFrontier(t, rdb, ck, Options{})
	for _, h := range []string{"x", "y"} {
		for _, p := range []string{"/1", "/2", "/3", "/4", "/5"} {
			admit(t, f, cand(h, p, "L", false))
		}
	}
	// A counts 1; B, new, starts level with it and counts 2; A, behind
	// B, may take one more.
	a, _ := claimAs(t, f, "A", 1)
	b, _ := claimAs(t, f, "B", 3)
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("first claims: A %v, B %v", hostsOf(a), hostsOf(b))
	}
	finish(t, f, a[0], b[0])
	ck.add(10 * time.Millisecond)
	if a, _ = claimAs(t, f, "A", 1); len(a) != 1 {
		t.Fatalf("A behind B: %v, want a host", hostsOf(a))
	}
	finish(t, f, a[0])
	ck.add(10 * time.Millisecond)
	return f, ck
}

// Fair claims (fair.lua): a claimant level with a hungry one takes one
// host and leaves the other for it, asked to look again a poll later; the
// hungry one then gets it. A host left ready past the grace, a claimant
// that stopped asking, or a claim for nobody in particular is not held
// back.
func TestFairClaims(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		t.Run("a host owed to the hungry claimant waits for it", func(t *testing.T) {
			f, _ := fairStart(t, rdb)
			a, wait := claimAs(t, f, "A", 2)
			if len(a) != 1 || wait != fairPoll {
				t.Fatalf("A level with hungry B: %v, wait %v; want one host, wait %v", hostsOf(a), wait, fairPoll)
			}
			b, _ := claimAs(t, f, "B", 3)
			if len(b) != 1 || b[0].Host == a[0].Host {
				t.Fatalf("B after A took %s: %v, want the other host", a[0].Host, hostsOf(b))
			}
		})
		t.Run("past the grace anyone takes it", func(t *testing.T) {
			f, ck := fairStart(t, rdb)
			ck.add(fairGrace + time.Millisecond)
			if a, _ := claimAs(t, f, "A", 2); len(a) != 2 {
				t.Fatalf("hosts ready past the grace: A got %v, want both", hostsOf(a))
			}
		})
		t.Run("a claimant quiet for the window is forgotten", func(t *testing.T) {
			f, ck := fairStart(t, rdb)
			// The hosts come due again only now (a claim for nobody,
			// finished), so the grace does not apply: only B's silence lets
			// A take both.
			ck.add(fairWindow + time.Millisecond)
			finish(t, f, claim(t, f, 2)...)
			ck.add(10 * time.Millisecond)
			if got, _ := claimAs(t, f, "A", 2); len(got) != 2 {
				t.Fatalf("A after B was quiet for the window: %v, want both hosts", hostsOf(got))
			}
		})
		t.Run("a claim for nobody takes what is ready", func(t *testing.T) {
			f, _ := fairStart(t, rdb)
			if cs := claim(t, f, 2); len(cs) != 2 {
				t.Fatalf("claim without a claimant: %v, want both hosts", hostsOf(cs))
			}
		})
		t.Run("a hungry claimant sharing the frontier looks again a poll later", func(t *testing.T) {
			f, _ := fairStart(t, rdb)
			a, _ := claimAs(t, f, "A", 1)
			b, _ := claimAs(t, f, "B", 1)
			if len(a) != 1 || len(b) != 1 {
				t.Fatalf("A %v, B %v: want a host each", hostsOf(a), hostsOf(b))
			}
			// Both hosts are leased, URIs queued behind them: B, hungry,
			// is told to look again a poll later, not that nothing waits.
			if got, wait := claimAs(t, f, "B", 2); len(got) != 0 || wait != fairPoll {
				t.Fatalf("B with every host leased: %v, wait %v; want none, wait %v", hostsOf(got), wait, fairPoll)
			}
			// Without other claimants the claim says Idle as before.
			if got, wait, err := f.Claim(context.Background(), 2, time.Minute); err != nil || len(got) != 0 || wait != Idle {
				t.Fatalf("claim for nobody with every host leased: %v, wait %v, %v; want Idle", hostsOf(got), wait, err)
			}
		})
	})
}
