package cdxwriter

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// outback is a stand-in external OutbackCDX: it answers 503 to the first
// failFirst POSTs (or to all, with failAlways), then accepts lines.
type outback struct {
	mu         sync.Mutex
	posts      int
	failFirst  int
	failAlways int // status for every POST; 0: none
	lines      map[string]int
}

func (o *outback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.posts++
	if o.failAlways != 0 {
		http.Error(w, "At line: nope", o.failAlways)
		return
	}
	if o.posts <= o.failFirst {
		http.Error(w, "warming up", http.StatusServiceUnavailable)
		return
	}
	if r.URL.Path != "/fc" {
		http.Error(w, "wrong collection "+r.URL.Path, http.StatusNotFound)
		return
	}
	n := 0
	sc := bufio.NewScanner(r.Body)
	for sc.Scan() {
		o.lines[sc.Text()]++
		n++
	}
	fmt.Fprintf(w, "Added %d records\n", n)
}

func (o *outback) received() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for l := range o.lines {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// Forwarding survives an OutbackCDX that fails before it recovers: every
// capture line and failure line arrives, and the forward group commits.
func TestForwardRecovers(t *testing.T) {
	h := newHarness(t, 1)
	ob := &outback{failFirst: 3, lines: map[string]int{}}
	srv := httptest.NewServer(ob)
	t.Cleanup(srv.Close)
	h.cfg.ForwardURL = srv.URL
	h.produce(t, goldenEvents(t)...)
	h.produce(t, eventJSON("http://gone.example/", -6, "20240101000000000", "", "", 0))
	h.start(t)
	h.waitCommitted(t, h.cfg.ForwardGroup())
	h.waitCommitted(t, h.cfg.Group())
	want := []string{
		"example,gone)/ 20240101000000 http://gone.example/ failure-status-code/-6 599 - - - 0 0 -",
		"net,example,cdn)/lib.js 20240117090005 https://cdn.example.net/lib.js application/javascript 200 LCEWW6ZKJ3UEBNBBJTUM7N7J4V5LFI4L - - 3190 2201 NPLD-WEBRENDER-20240117085901000-00000-renderer-0.warc.gz",
		"org,example,news)/ 20240117090002 https://news.example.org/ text/html 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - 13107 10422 NPLD-20240117085959123-00001-worker-0.warc.gz",
	}
	got := ob.received()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("forwarded:\n%s\nwant:\n%s", got, want)
	}
	if ob.posts < 4 {
		t.Errorf("%d POSTs, want the 3 failures and a success", ob.posts)
	}
}

// When OutbackCDX rejects the lines for good, the forward group stops
// committing (the lines are kept in Kafka) while indexing carries on.
func TestForwardPermanentFailureHoldsOnlyForwarding(t *testing.T) {
	h := newHarness(t, 1)
	ob := &outback{failAlways: http.StatusBadRequest, lines: map[string]int{}}
	srv := httptest.NewServer(ob)
	t.Cleanup(srv.Close)
	h.cfg.ForwardURL = srv.URL
	h.produce(t, goldenEvents(t)...)
	r := h.start(t)
	h.waitCommitted(t, h.cfg.Group())
	if got := query(t, r.w, "https://news.example.org/"); len(got) != 1 {
		t.Errorf("indexing held back by forwarding: %+v", got)
	}
	// The forwarder keeps failing and retrying the batch.
	deadline := time.Now().Add(20 * time.Second)
	for metricValue(t, h, "trawler_cdxforward_failures_total") < 2 {
		if time.Now().After(deadline) {
			t.Fatal("forwarder did not report repeated failures")
		}
		time.Sleep(20 * time.Millisecond)
	}
	committed, err := kadm.NewClient(h.cl).FetchOffsets(context.Background(), h.cfg.ForwardGroup())
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := committed.Lookup("fc.crawled", 0); ok && o.At > 0 {
		t.Errorf("forward group committed offset %d despite the failure", o.At)
	}
	if metricValue(t, h, "trawler_cdxforward_failing") != 1 {
		t.Error("failing gauge not set")
	}
	// The held-back events show as the forward group's lag (a deadline of
	// its own: on a loaded machine the wait above can use most of one; and
	// room for a few lag polls given up after maxLagPoll).
	deadline = time.Now().Add(45 * time.Second)
	for lagOf(t, h, h.cfg.ForwardGroup()) != 3 || lagOf(t, h, h.cfg.Group()) != 0 {
		if time.Now().After(deadline) {
			logs := h.logs.String()
			t.Fatalf("lag: forward %v, index %v; want 3 and 0; the writer's log ends:\n%s",
				lagOf(t, h, h.cfg.ForwardGroup()), lagOf(t, h, h.cfg.Group()), logs[max(0, len(logs)-3000):])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lagOf reads trawler_cdxwriter_lag_records for group; -1 when unset.
func lagOf(t *testing.T, h *harness, group string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "trawler_cdxwriter_lag_records" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "group" && l.GetValue() == group {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

func metricValue(t *testing.T, h *harness, name string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				v += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return v
}
