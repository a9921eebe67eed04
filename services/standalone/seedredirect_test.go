package standalone

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

// loopbackHosts resolves the listed names to 127.0.0.1 and nothing else.
type loopbackHosts []string

func (h loopbackHosts) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if slices.Contains(h, host) {
		return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// smallSite is a site of six pages: / links /1 and /2, /n links /n+2.
func smallSite(w http.ResponseWriter, r *http.Request) {
	var n int
	if r.URL.Path != "/" {
		if _, err := fmt.Sscanf(r.URL.Path, "/%d", &n); err != nil || n < 1 || n > 5 {
			http.NotFound(w, r)
			return
		}
	}
	links := []int{n + 2}
	if n == 0 {
		links = []int{1, 2}
	}
	w.Header().Set("Content-Type", "text/html")
	_, _ = fmt.Fprintf(w, `<html><body>page %d`, n)
	for _, k := range links {
		if k <= 5 {
			_, _ = fmt.Fprintf(w, ` <a href="/%d">%d</a>`, k, k)
		}
	}
	_, _ = io.WriteString(w, "</body></html>")
}

// siteCaptures returns the URLs of the response records captured under
// root (scheme, host and port), sorted.
func siteCaptures(t *testing.T, sum *Summary, root string) []string {
	t.Helper()
	var out []string
	for u := range validateWARCs(t, sum.WARCFiles) {
		if strings.HasPrefix(u, root) {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// A seed that moved to another host, or from http to https: the crawl of
// the seed captures every page of the new site, exactly what seeding the
// new site does, and the seeds report lists the seed, its redirect, and
// the target as a seed of its own.
func TestStandaloneSeedRedirect(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(smallSite))
	t.Cleanup(plain.Close)
	secure := httptest.NewUnstartedServer(http.HandlerFunc(smallSite))
	secure.StartTLS()
	t.Cleanup(secure.Close)
	_, plainPort, _ := net.SplitHostPort(plain.Listener.Addr().String())
	_, securePort, _ := net.SplitHostPort(secure.Listener.Addr().String())
	moved := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch host, _, _ := strings.Cut(r.Host, ":"); host {
		case "site-a.test":
			http.Redirect(w, r, "http://www.site-b.test:"+plainPort+"/", http.StatusMovedPermanently)
		case "site-c.test":
			http.Redirect(w, r, "https://site-c.test:"+securePort+"/", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(moved.Close)
	_, movedPort, _ := net.SplitHostPort(moved.Listener.Addr().String())
	hosts := loopbackHosts{"site-a.test", "www.site-b.test", "site-c.test"}

	for _, tc := range []struct{ name, seed, target string }{
		{"other host", "http://site-a.test:" + movedPort + "/", "http://www.site-b.test:" + plainPort + "/"},
		{"https", "http://site-c.test:" + movedPort + "/", "https://site-c.test:" + securePort + "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(seed string) *Summary {
				return runResolved(t, Config{DataDir: t.TempDir(), Seeds: []string{seed}}, hosts, testProfile())
			}
			direct := run(tc.target)
			want := siteCaptures(t, direct, tc.target)
			if len(want) != 6 {
				t.Fatalf("seeding the target directly captured %d pages, want 6: %v", len(want), want)
			}
			via := run(tc.seed)
			if got := siteCaptures(t, via, tc.target); !slices.Equal(got, want) {
				t.Fatalf("through the redirect captured\n%v\nwant\n%v", got, want)
			}
			report, err := os.ReadFile(filepath.Join(via.ReportsDir, "seeds-report.txt"))
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range []string{"301 CRAWLED " + tc.seed + " " + tc.target + "\n", "200 CRAWLED " + tc.target + "\n"} {
				if !strings.Contains(string(report), line) {
					t.Errorf("seeds-report.txt lacks %q:\n%s", line, report)
				}
			}
		})
	}
}

// runResolved runs standalone until idle with hosts resolved to loopback.
func runResolved(t *testing.T, cfg Config, hosts loopbackHosts, p profile.Profile) *Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg.UntilIdle, cfg.KafkaListen, cfg.AdminAddr, cfg.CDXAddr = true, "127.0.0.1:0", "127.0.0.1:0", ""
	cfg.Crawl, cfg.Stream, cfg.Threads, cfg.Partitions, cfg.TimeZone = "fc", "npld", 4, 2, "Europe/London"
	sum, err := Run(ctx, cfg, Deps{Profile: p, Resolver: hosts,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: prometheus.NewRegistry(), Version: "test"})
	if err != nil {
		t.Fatalf("standalone run: %v", err)
	}
	return sum
}
