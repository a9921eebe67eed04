package frontier

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
)

// The top-hosts scan keeps the n hosts with the most URIs queued, most
// first and ties by name, and the collector exports them as
// trawler_frontier_top_host_queued_uris, dropping a host once it leaves.
func TestTopQueuedHosts(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		for _, shards := range []int{1, 3} {
			t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
				rdb.FlushAll(context.Background())
				f := newTestFrontier(t, rdb, newClock(), Options{Shards: shards})
				ctx := context.Background()
				// h<i> gets i URIs: h12 the most.
				for i := 1; i <= 12; i++ {
					host := fmt.Sprintf("h%02d", i)
					var cs []Candidate
					for j := range i {
						cs = append(cs, cand(host, fmt.Sprintf("/%d", j), "L", false))
					}
					admit(t, f, cs...)
				}
				admit(t, f, cand("a-tie", "/1", "L", false), cand("a-tie", "/2", "L", false), cand("a-tie", "/3", "L", false))
				tests := []struct {
					n    int
					want string
				}{
					{0, ""},
					{1, "h12:12"},
					{3, "h12:12 h11:11 h10:10"},
					{11, "h12:12 h11:11 h10:10 h09:9 h08:8 h07:7 h06:6 h05:5 h04:4 a-tie:3 h03:3"},
				}
				for _, tt := range tests {
					got, err := f.TopQueuedHosts(ctx, tt.n)
					if err != nil {
						t.Fatal(err)
					}
					var parts []string
					for _, h := range got {
						parts = append(parts, fmt.Sprintf("%s:%d", h.Host, h.Queued))
					}
					if s := strings.Join(parts, " "); s != tt.want {
						t.Errorf("top %d = %q, want %q", tt.n, s, tt.want)
					}
				}
			})
		}
	})
}

// The collector exports the top 10 hosts and, at its next scan, drops the
// hosts that left the top.
func TestCollectorTopHosts(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, nil, Options{})
		c := NewCollector(f).(*collector)
		if got := collectTop(t, c); len(got) != 0 {
			t.Fatalf("top hosts of an empty frontier: %v", got)
		}
		for i := 1; i <= 12; i++ {
			var cs []Candidate
			for j := range i {
				cs = append(cs, cand(fmt.Sprintf("h%02d", i), fmt.Sprintf("/%d", j), "L", false))
			}
			admit(t, f, cs...)
		}
		series := func() map[string]float64 { return collectTop(t, c) }
		got := series()
		if len(got) != topHosts || got["h12"] != 12 || got["h03"] != 3 || got["h02"] != 0 {
			t.Fatalf("top hosts %v, want h03..h12 with their counts", got)
		}
		// A new host with more URIs than any pushes h03 out of the top.
		var cs []Candidate
		for j := range 20 {
			cs = append(cs, cand("z", fmt.Sprintf("/%d", j), "L", false))
		}
		admit(t, f, cs...)
		if got := series(); got["z"] != 0 {
			t.Errorf("z exported before the next scan was due: %v", got)
		}
		c.top.c.Expire() // the scan is due
		got = series()
		if _, ok := got["h03"]; len(got) != topHosts || got["z"] != 20 || ok {
			t.Fatalf("top hosts %v: want z and h04..h12", got)
		}
		// Once nothing is queued (all in flight) there is no top; URIs
		// queued after that are read at the next scrape, not after the
		// last list's time is up.
		ctx := context.Background()
		if _, err := f.TakeQueued(ctx, Selector{}, time.Hour); err != nil {
			t.Fatal(err)
		}
		if st, err := f.Stats(ctx); err != nil || st.Queued != 0 {
			t.Fatalf("after taking every queued URI: %+v, %v", st, err)
		}
		if got := series(); len(got) != 0 {
			t.Fatalf("top hosts with nothing queued: %v", got)
		}
		cs = nil
		for j := range 30 {
			cs = append(cs, cand("y", fmt.Sprintf("/%d", j), "L", false))
		}
		admit(t, f, cs...)
		if got := series(); len(got) != 1 || got["y"] != 30 {
			t.Fatalf("top hosts after new URIs: %v, want y alone", got)
		}
	})
}

// collectTop gathers c and returns its top-hosts gauge by host.
func collectTop(t *testing.T, c *collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "trawler_frontier_top_host_queued_uris" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "host" {
					out[lp.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}

// ClientMetrics count what the claiming process did; nil ones do nothing.
func TestClientMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := NewClientMetrics(reg, "fc-npld")
	if err != nil {
		t.Fatal(err)
	}
	m.ObserveClaim(3 * time.Millisecond)
	m.LeasesExpired(0)
	m.LeasesExpired(2)
	if n := testutil.ToFloat64(m.leasesExpired); n != 2 {
		t.Errorf("leases expired %v, want 2", n)
	}
	if n := testutil.CollectAndCount(m.claimSeconds); n != 1 {
		t.Errorf("claim histogram series %d, want 1", n)
	}
	if _, err := NewClientMetrics(reg, "fc-npld"); err == nil {
		t.Error("registering twice must fail")
	}
	var none *ClientMetrics
	none.ObserveClaim(time.Second)
	none.LeasesExpired(1)
}
