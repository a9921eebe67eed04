package console

import (
	"context"
	"encoding/json"
	"net/http"
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
	if live.Status == nil || live.Status.Queued != 1 || live.Status.Frontier != "fc-npld" || len(live.Errors) != 0 {
		t.Fatalf("status: %+v errors %v", live.Status, live.Errors)
	}
	if p.WARCBytes == nil || *p.WARCBytes != 1024 || p.CDXLag != nil || p.DiskFree == nil || *p.DiskFree <= 0 {
		t.Fatalf("process: %s", body)
	}
	if len(live.Workers) != 1 || live.Workers[0].ID != "w0" || live.Workers[0].Kind != "worker" ||
		len(live.Renderers) != 1 || live.Renderers[0].ID != "r" {
		t.Fatalf("alive: workers %+v renderers %+v", live.Workers, live.Renderers)
	}
}
