package console

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/identity"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// live.json carries the frontier's status (the API's), this process's
// metrics summed over their labels, the disk, and the workers and
// renderers alive: leased ones and the in-process ones; a metric the
// process lacks is absent, not 0.
func TestLiveJSON(t *testing.T) {
	reg := prometheus.NewRegistry()
	bytes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trawler_warc_written_bytes_total"}, []string{"kind"})
	reg.MustRegister(bytes)
	bytes.WithLabelValues("a").Add(1000)
	bytes.WithLabelValues("b").Add(24)
	h := newHarness(t, harnessOptions{deps: func(d *Deps) {
		d.Gatherer = reg
		d.InProcess = []identity.Holder{{ID: "r", Kind: "renderer"}}
	}})
	ctx := context.Background()
	if _, err := h.f.Admit(ctx, []frontier.Candidate{{Launch: messages.Launch{URL: "http://a.test/", IsSeed: true},
		Policy: frontier.PolicyOf(profile.Default())}}); err != nil {
		t.Fatal(err)
	}
	// b.test answers 503: it backs off, and the overview names it.
	pol := frontier.PolicyOf(profile.Default())
	pol.Politeness.BackOffBaseMs, pol.Politeness.BackOffMaxMs = 60000, 60000
	if _, err := h.f.Admit(ctx, []frontier.Candidate{{Launch: messages.Launch{URL: "http://b.test/", IsSeed: true}, Policy: pol}}); err != nil {
		t.Fatal(err)
	}
	claims, _, err := h.f.Claim(ctx, 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claims {
		if c.Host == "b.test" {
			if _, err := h.f.Complete(ctx, []frontier.Outcome{{Claim: c, Status: 503, Policy: pol}}); err != nil {
				t.Fatal(err)
			}
		} else if err := h.f.Release(ctx, []*frontier.Claim{c}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := identity.Try(ctx, h.c.d.Redis, identity.Key("fc-npld", "w0"), "worker", time.Minute, nil)
	if err != nil || l == nil {
		t.Fatalf("lease: %v", err)
	}
	t.Cleanup(func() { _ = l.Release() })
	cl := h.client()
	h.login(cl, readToken)
	code, body, _ := h.do(cl, "GET", Prefix+"live.json", nil)
	if code != http.StatusOK {
		t.Fatalf("live.json: %d %s", code, body)
	}
	var live Live
	if err := json.Unmarshal([]byte(body), &live); err != nil {
		t.Fatal(err)
	}
	p := live.Process
	if live.Status == nil || live.Status.Queued != 2 || live.Status.Frontier != "fc-npld" || len(live.Errors) != 0 {
		t.Fatalf("status: %+v errors %v", live.Status, live.Errors)
	}
	if p.WARCBytes == nil || *p.WARCBytes != 1024 || p.CDXLag != nil || p.DiskFree == nil || *p.DiskFree <= 0 {
		t.Fatalf("process: %s", body)
	}
	if len(live.BackingOff) != 1 || live.BackingOff[0].Host != "b.test" || live.BackingOff[0].Status != 503 {
		t.Fatalf("backing off: %+v", live.BackingOff)
	}
	if _, page, _ := h.do(cl, "GET", Prefix, nil); !strings.Contains(page, `<li><a href="/console/host?h=b.test">b.test</a> status 503, 1 in a row`) {
		t.Fatalf("overview names no rate-limited host:\n%s", page)
	}
	if len(live.Workers) != 1 || live.Workers[0].ID != "w0" || live.Workers[0].Kind != "worker" ||
		len(live.Renderers) != 1 || live.Renderers[0].ID != "r" {
		t.Fatalf("alive: workers %+v renderers %+v", live.Workers, live.Renderers)
	}
}
