package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// fairSite serves pages on any host, each taking delay: /0 links /1 ...
// /pages, the rest link nothing.
func fairSite(t *testing.T, delay time.Duration, pages int) *fcSite {
	return fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(delay) // the site is slow on purpose
		var links []string
		if r.URL.Path == "/0" {
			for i := range pages {
				links = append(links, fmt.Sprintf("/%d", i+1))
			}
		}
		fcHTML(w, fcPage("", links...))
	})
}

// Issue 36, fair claims: three worker processes (TestMain's child mode)
// share one frontier whose few hosts are the crawl's bottleneck (four
// hosts, six threads), the state in which whichever worker asks first
// would win every host that comes due. Each worker's share of the pages
// crawled (one claim each) stays within 20 % of a third.
func TestFairClaimsThreeWorkerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes, a broker and Redis")
	}
	for _, tc := range []struct {
		name       string
		hosts      []string
		pages      int
		delay      time.Duration
		politeness profile.Politeness
	}{
		// A host comes due while its last claimer is still busy elsewhere.
		{"politeness 20ms, four hosts", []string{"a.test", "b.test", "c.test", "d.test"}, 90, 30 * time.Millisecond,
			profile.Politeness{MinDelayMs: 20, MaxDelayMs: 20}},
		// TestControlTopicThreeWorkers' crawl: a host is due again the
		// moment its fetch ends, and the worker that fetched it is the
		// first to know.
		{"no politeness, three slow hosts", []string{"a.test", "b.test", "c.test"}, 60, 150 * time.Millisecond,
			profile.Politeness{MaxDelayMs: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) { runFairClaims(t, tc.hosts, tc.pages, tc.delay, tc.politeness) })
	}
}

func runFairClaims(t *testing.T, hostNames []string, pages int, delay time.Duration, pol profile.Politeness) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	kc, cl := embeddedtest.Kafka(t, 2)
	site := fairSite(t, delay, pages)
	hosts := map[string]string{}
	for _, h := range hostNames {
		hosts[h] = "127.0.0.1"
	}
	children := make([]*procChild, 3)
	for i := range children {
		children[i] = startProc(t, childSpec{Redis: rdb.Options().Addr, Brokers: kc.Brokers, Dir: t.TempDir(),
			ID: fmt.Sprintf("w%d", i+1), Hosts: hosts, Threads: 2, Token: "fair-test-token", Politeness: &pol})
	}
	for _, c := range children {
		c.ready(t, 60*time.Second)
	}
	t.Cleanup(func() {
		for _, c := range children {
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
			_ = waitExit(t, c.cmd, 30*time.Second)
		}
	})
	for _, h := range hostNames {
		u := site.url(h, "/0")
		b, _ := json.Marshal(messages.Launch{URL: u, IsSeed: true, ParentURL: u})
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte(u), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	front, err := frontier.New(rdb, "fc-npld", frontier.OptionsFrom(identityProfile()))
	if err != nil {
		t.Fatal(err)
	}
	want := int64(len(hostNames) * (pages + 1))
	deadline := time.Now().Add(3 * time.Minute)
	for {
		tot, err := front.Totals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err := front.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tot.ByStatus[200] >= want && st.Queued == 0 && st.InFlight == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, c := range children {
				t.Logf("child %s stderr:\n%s", c.id, c.stderr)
			}
			t.Fatalf("crawl not finished: %d of %d pages, %+v", tot.ByStatus[200], want, st)
		}
		time.Sleep(50 * time.Millisecond) // polling the frontier with a deadline
	}
	var per []int
	total := 0
	for _, c := range children {
		n := 0
		for _, f := range crawlLogLines(c.spec.Dir, c.id, false) {
			if s, err := strconv.Atoi(f[1]); err == nil && s == 200 && !strings.HasSuffix(f[3], "/robots.txt") {
				n++
			}
		}
		per = append(per, n)
		total += n
	}
	if int64(total) != want {
		t.Fatalf("crawl.log lines with 200: %d by worker %v, want %d", total, per, want)
	}
	var shares []string
	for i, n := range per {
		share := float64(n) / float64(total)
		shares = append(shares, fmt.Sprintf("%.1f%%", 100*share))
		if share < 0.8/3 || share > 1.2/3 {
			t.Errorf("worker %s crawled %d of %d pages (%.1f%%): want within 20%% of a third (26.7%%..40%%)",
				children[i].id, n, total, 100*share)
		}
	}
	t.Logf("pages crawled by worker: %v of %d, shares %v", per, total, shares)
}
