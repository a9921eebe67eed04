package worker

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// Each host the address guard refuses is logged at WARN once, however
// many of its URIs are refused, with the reason and the setting that
// allows it; Refused lists the hosts and Archived stays 0 (dns: records
// do not count).
func TestAddressGuardRefusalsLoggedOncePerHost(t *testing.T) {
	for _, policy := range []string{profile.RobotsIgnore, profile.RobotsObey} {
		t.Run(policy, func(t *testing.T) {
			e := setup(t)
			site := fcServe(t, func(w http.ResponseWriter, r *http.Request) { fcHTML(w, fcPage("")) })
			p := fcProfile()
			p.Robots.Policy = policy
			seeds := []string{site.url("a.test", "/1"), site.url("a.test", "/2"), site.url("a.test", "/3"),
				site.url("b.test", "/1"), site.url("127.0.0.1", "/x")}
			log, logs := testlog.New(slog.LevelInfo)
			var refused []Refusal
			var hosts, archived int64
			e.crawl(t, crawlRun{p: p, resolver: newFCHosts("a.test", "b.test"), seeds: seeds, minURIs: int64(len(seeds)),
				guarded: true, log: log, after: func(w *Worker) {
					refused, hosts = w.Refused()
					archived = w.Archived()
				}})

			if n := site.accepts.Load(); n != 0 {
				t.Errorf("%d connections reached the guarded server", n)
			}
			var lines []string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "address guard refused") {
					lines = append(lines, l)
				}
			}
			want := map[string]bool{"a.test:" + site.port: true, "b.test:" + site.port: true, "127.0.0.1:" + site.port: true}
			if len(lines) != len(want) {
				t.Fatalf("%d refusal lines, want one per host (%d):\n%s", len(lines), len(want), strings.Join(lines, "\n"))
			}
			for _, l := range lines {
				if !strings.Contains(l, "level=WARN") || !strings.Contains(l, "127.0.0.1 is loopback") ||
					!strings.Contains(l, "fetch.allowPrivateAddresses: true") {
					t.Errorf("refusal line lacks WARN, the reason or the setting: %s", l)
				}
			}
			if hosts != int64(len(want)) || len(refused) != len(want) {
				t.Fatalf("Refused() = %v, %d hosts; want the %d hosts", refused, hosts, len(want))
			}
			for _, r := range refused {
				if !want[r.Host] || r.Reason != "127.0.0.1 is loopback" {
					t.Errorf("refusal %+v: want one of %v, reason 127.0.0.1 is loopback", r, want)
				}
			}
			if archived != 0 {
				t.Errorf("Archived() = %d with every host refused, want 0", archived)
			}
		})
	}
}
