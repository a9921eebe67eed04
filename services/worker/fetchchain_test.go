package worker

// End-to-end tests of the fetch chain's preconditions (robots.txt, DNS,
// the address guard) against small purpose-built sites served from this
// process, reached through a static resolver. fetchchain2_test.go covers
// credentials, conditional requests and the virus scan.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// fcHosts is a static resolver: names map to 127.0.0.1, unknown names fail
// as NXDOMAIN (pkg/dns's Static mode reads IsNotFound as permanent), and a
// name listed in flaky fails temporarily that many times before answering.
type fcHosts struct {
	mu    sync.Mutex
	known map[string]bool
	flaky map[string]int
	calls map[string]int
}

func newFCHosts(names ...string) *fcHosts {
	h := &fcHosts{known: map[string]bool{}, flaky: map[string]int{}, calls: map[string]int{}}
	for _, n := range names {
		h.known[n] = true
	}
	return h
}

func (h *fcHosts) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls[host]++
	if h.flaky[host] > 0 {
		h.flaky[host]--
		return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
	}
	if !h.known[host] {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
}

func (h *fcHosts) lookups(host string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[host]
}

// fcSite is an http.Server on 127.0.0.1 that counts accepted connections
// and requests by path.
type fcSite struct {
	port    string
	accepts atomic.Int64
	mu      sync.Mutex
	hits    map[string]int
	order   []string // "METHOD /path" in arrival order
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// fcServe serves h on a fresh loopback port until the test ends.
func fcServe(t *testing.T, h http.HandlerFunc) *fcSite {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fcSite{hits: map[string]int{}}
	_, s.port, _ = net.SplitHostPort(ln.Addr().String())
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.RequestURI()]++
		s.order = append(s.order, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		h(w, r)
	})}
	go func() { _ = srv.Serve(countingListener{ln, &s.accepts}) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// url is the absolute URL of path on host, at the site's port.
func (s *fcSite) url(host, path string) string { return "http://" + host + ":" + s.port + path }

func (s *fcSite) hitCount(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// fcProfile is the profile of these tests: fast politeness, two quick
// retries.
func fcProfile() profile.Profile {
	p := profile.Default()
	p.Politeness = profile.Politeness{MaxDelayMs: 5}
	p.Frontier.MaxRetries, p.Frontier.RetryDelaySeconds = 2, 0
	return p
}

// fcPage is an HTML page with head and links.
func fcPage(head string, links ...string) string {
	var b strings.Builder
	b.WriteString("<html><head>" + head + "</head><body>")
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">%s</a> `, l, l)
	}
	b.WriteString("</body></html>")
	return b.String()
}

func fcHTML(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/html")
	_, _ = io.WriteString(w, body)
}

// fcOne returns the only event of url, failing the test if there is not
// exactly one.
func fcOne(t *testing.T, events map[string][]messages.Crawled, url string) messages.Crawled {
	t.Helper()
	evs := events[url]
	if len(evs) != 1 {
		t.Fatalf("%s: %d crawled events, want exactly 1 (all: %v)", url, len(evs), fcSummary(events))
	}
	return evs[0]
}

// fcSummary lists events as "url status annotations" for failure messages.
func fcSummary(events map[string][]messages.Crawled) []string {
	var out []string
	for u, evs := range events {
		for _, ev := range evs {
			out = append(out, fmt.Sprintf("%s %d %q", u, ev.StatusCode, ev.Annotations))
		}
	}
	return out
}

func fcHasNote(ev messages.Crawled, note string) bool {
	for _, a := range strings.Split(ev.Annotations, ",") {
		if a == note {
			return true
		}
	}
	return false
}

// fcRetried reports whether ev carries Heritrix's "Nt" retry annotation.
func fcRetried(ev messages.Crawled) bool {
	for _, a := range strings.Split(ev.Annotations, ",") {
		if n, ok := strings.CutSuffix(a, "t"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			return true
		}
	}
	return false
}

// fcRecord reads the WARC record at ev's location, from the normal or the
// viral WARC directory under dir, and returns its header and which
// directory held it.
func fcRecord(t *testing.T, dir string, ev messages.Crawled) (h gowarc.WarcFields, typ gowarc.RecordType, viral bool) {
	t.Helper()
	if ev.WarcFilename == nil || ev.WarcOffset == nil {
		t.Fatalf("%s: event has no WARC location", ev.URL)
	}
	path := filepath.Join(dir, "warcs", "fc-npld", *ev.WarcFilename)
	if _, err := os.Stat(path); err != nil {
		path, viral = filepath.Join(dir, "warcs-viral", "fc-npld", *ev.WarcFilename), true
	}
	r, err := warcwriter.OpenReader(path, *ev.WarcOffset)
	if err != nil {
		t.Fatalf("%s: open %s: %v", ev.URL, path, err)
	}
	defer func() { _ = r.Close() }()
	rec, _, _, err := r.Next()
	if err != nil {
		t.Fatalf("%s: read record at %s@%d: %v", ev.URL, *ev.WarcFilename, *ev.WarcOffset, err)
	}
	defer func() { _ = rec.Close() }()
	if got := rec.WarcHeader().Get(gowarc.WarcTargetURI); got != ev.URL {
		t.Fatalf("record at %s@%d is of %q, want %q", *ev.WarcFilename, *ev.WarcOffset, got, ev.URL)
	}
	return *rec.WarcHeader(), rec.Type(), viral
}

const fcRobots = "User-agent: *\nDisallow: /private\nDisallow: /*.pdf$\nDisallow: /*/secret\nCrawl-delay: 0.3\n"

// robotsSite serves fcRobots, a home page linking to excluded and allowed
// URLs, and a page with meta robots nofollow linking to /hidden.html.
func robotsSite(t *testing.T) *fcSite {
	return fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, fcRobots)
		case "/":
			fcHTML(w, fcPage("", "/private/a.html", "/doc.pdf", "/doc.pdf?v=1", "/open/secret", "/open/page.html", "/nofollow.html"))
		case "/nofollow.html":
			fcHTML(w, fcPage(`<meta name="robots" content="nofollow">`, "/hidden.html"))
		case "/doc.pdf":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "not really a pdf")
		default:
			fcHTML(w, fcPage(""))
		}
	})
}

// Every robots policy against one site: what is excluded (-9998, no
// capture), what calculateRobotsOnly fetches but marks, where meta
// nofollow is honoured, that robots.txt is fetched once (never under
// ignore), and that its Crawl-delay reaches the frontier.
func TestRobotsPolicies(t *testing.T) {
	excluded := []string{"/private/a.html", "/doc.pdf", "/open/secret"} // prefix, $ and wildcard rules
	allowed := []string{"/", "/doc.pdf?v=1", "/open/page.html", "/nofollow.html"}
	for _, tc := range []struct {
		policy   string
		enforce  bool // excluded URIs finish -9998
		nofollow bool // meta nofollow honoured: /hidden.html never found
		robots   bool // robots.txt fetched
	}{
		{profile.RobotsObey, true, true, true},
		{profile.RobotsClassic, true, true, true},
		{profile.RobotsTxtOnly, true, false, true},
		{profile.RobotsCalculateOnly, false, false, true},
		{profile.RobotsIgnore, false, false, false},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			e := setup(t)
			site := robotsSite(t)
			p := fcProfile()
			p.Robots.Policy = tc.policy
			dir := t.TempDir()
			events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("site.test"), seeds: []string{site.url("site.test", "/")}, minURIs: 1, dir: dir})

			for _, path := range excluded {
				ev := fcOne(t, events, site.url("site.test", path))
				switch {
				case tc.enforce:
					// Heritrix's PreconditionEnforcer gives -9998 no annotation.
					if ev.StatusCode != -9998 || fcHasNote(ev, "robotExcluded") || ev.WarcFilename != nil {
						t.Errorf("%s: status %d notes %q warc %v, want -9998 unannotated without capture", path, ev.StatusCode, ev.Annotations, ev.WarcFilename)
					}
					if n := site.hitCount(path); n != 0 {
						t.Errorf("%s: server saw %d requests for an excluded URI", path, n)
					}
				default:
					want := tc.policy == profile.RobotsCalculateOnly
					if ev.StatusCode != 200 || fcHasNote(ev, "robotExcluded") != want || ev.WarcFilename == nil {
						t.Errorf("%s: status %d notes %q, want 200 with robotExcluded=%v and a capture", path, ev.StatusCode, ev.Annotations, want)
					}
				}
			}
			for _, path := range allowed {
				if ev := fcOne(t, events, site.url("site.test", path)); ev.StatusCode != 200 || fcHasNote(ev, "robotExcluded") {
					t.Errorf("%s: status %d notes %q, want 200 unmarked", path, ev.StatusCode, ev.Annotations)
				}
			}
			hidden := events[site.url("site.test", "/hidden.html")]
			if tc.nofollow && len(hidden) != 0 {
				t.Errorf("meta nofollow not honoured under %s: %+v", tc.policy, hidden)
			}
			if !tc.nofollow && (len(hidden) != 1 || hidden[0].StatusCode != 200) {
				t.Errorf("meta nofollow honoured under %s: /hidden.html events %+v", tc.policy, hidden)
			}

			rob := events[site.url("site.test", "/robots.txt")]
			if !tc.robots {
				if len(rob) != 0 || site.hitCount("/robots.txt") != 0 {
					t.Fatalf("robots.txt fetched under ignore: %d events, %d requests", len(rob), site.hitCount("/robots.txt"))
				}
				return
			}
			if len(rob) != 1 || rob[0].HopPath != "P" || rob[0].StatusCode != 200 || site.hitCount("/robots.txt") != 1 {
				t.Fatalf("robots.txt: events %+v and %d requests, want one 200 prerequisite (hop P) fetched once", rob, site.hitCount("/robots.txt"))
			}
			f, err := NewFrontier(e.rdb, Config{Crawl: "fc", Stream: "npld"}, p, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			h, err := f.Host(context.Background(), "site.test:"+site.port)
			if err != nil {
				t.Fatal(err)
			}
			if h.CrawlDelay != 300*time.Millisecond {
				t.Fatalf("frontier crawl delay %v, want robots.txt's 0.3s", h.CrawlDelay)
			}
		})
	}
}

// A robots.txt that cannot be fetched (503, or nothing listening) is
// retried with the URI that needed it, which then finishes -61 with "3t";
// the robots.txt URI is logged once with its own status. A 404 robots.txt
// allows everything.
func TestRobotsUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name       string
		robots     int // status robots.txt answers; 0: the port is closed
		wantSeed   int
		wantRobots int
	}{
		{"503", http.StatusServiceUnavailable, -61, 503},
		{"closed port", 0, -61, -2},
		{"404", http.StatusNotFound, 200, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					w.WriteHeader(tc.robots)
					return
				}
				fcHTML(w, fcPage("", "/private/x.html"))
			})
			port := site.port
			if tc.robots == 0 {
				port = fcClosedPort(t)
			}
			base := "http://site.test:" + port
			events := e.crawl(t, crawlRun{p: fcProfile(), resolver: newFCHosts("site.test"), seeds: []string{base + "/"}, minURIs: 1})

			seed := fcOne(t, events, base+"/")
			rob := fcOne(t, events, base+"/robots.txt")
			if seed.StatusCode != tc.wantSeed || rob.StatusCode != tc.wantRobots || rob.HopPath != "P" {
				t.Fatalf("seed %d (%q), robots.txt %d hop %q; want %d and %d hop P",
					seed.StatusCode, seed.Annotations, rob.StatusCode, rob.HopPath, tc.wantSeed, tc.wantRobots)
			}
			if tc.wantSeed != -61 {
				if ev := fcOne(t, events, base+"/private/x.html"); ev.StatusCode != 200 {
					t.Fatalf("/private/x.html under a 404 robots.txt: %d, want 200", ev.StatusCode)
				}
				return
			}
			if !fcHasNote(seed, "3t") || seed.WarcFilename != nil {
				t.Fatalf("seed annotations %q warc %v, want 3t and no capture", seed.Annotations, seed.WarcFilename)
			}
			if tc.robots != 0 && (site.hitCount("/robots.txt") != 3 || site.hitCount("/") != 0) {
				t.Fatalf("server saw robots.txt %d times and / %d times, want 3 and 0", site.hitCount("/robots.txt"), site.hitCount("/"))
			}
		})
	}
}

// fcClosedPort returns a loopback port nothing listens on.
func fcClosedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// DNS prerequisites: one dns: capture per host, an unknown host finishes
// -6 at once, and temporary failures are retried.
func TestDNSPrerequisites(t *testing.T) {
	e := setup(t)
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			fcHTML(w, fcPage("", "/p1.html", "/p2.html"))
			return
		}
		fcHTML(w, fcPage(""))
	})
	hosts := newFCHosts("a.test", "b.test", "flaky.test", "down.test")
	hosts.flaky["flaky.test"] = 2 // answers at the third attempt
	hosts.flaky["down.test"] = 10 // never within the retries
	var seeds []string
	for _, h := range []string{"a.test", "b.test", "nx.test", "flaky.test", "down.test"} {
		seeds = append(seeds, site.url(h, "/"))
	}
	dir := t.TempDir()
	events := e.crawl(t, crawlRun{p: fcProfile(), resolver: hosts, seeds: seeds, minURIs: int64(len(seeds)), dir: dir})

	for _, h := range []string{"a.test", "b.test", "flaky.test"} {
		dns := fcOne(t, events, "dns:"+h)
		if dns.StatusCode != 1 || dns.Mimetype != "text/dns" || dns.HopPath != "P" || dns.Via != site.url(h, "/") {
			t.Errorf("dns:%s: status %d mime %q hop %q via %q, want 1 text/dns P via the seed", h, dns.StatusCode, dns.Mimetype, dns.HopPath, dns.Via)
		}
		hdr, typ, _ := fcRecord(t, dir, dns)
		if typ != gowarc.Response || hdr.Get(gowarc.ContentType) != "text/dns" {
			t.Errorf("dns:%s record is %s of %q, want a text/dns response", h, typ, hdr.Get(gowarc.ContentType))
		}
		for _, path := range []string{"/", "/p1.html", "/p2.html"} {
			if ev := fcOne(t, events, site.url(h, path)); ev.StatusCode != 200 {
				t.Errorf("%s%s: status %d, want 200", h, path, ev.StatusCode)
			}
		}
	}
	if n := hosts.lookups("a.test"); n != 1 {
		t.Errorf("a.test looked up %d times, want once (cached)", n)
	}
	if ev := fcOne(t, events, site.url("flaky.test", "/")); !fcHasNote(ev, "3t") {
		t.Errorf("flaky.test seed annotations %q, want 3t (two DNS retries)", ev.Annotations)
	}

	nx := fcOne(t, events, site.url("nx.test", "/"))
	if nx.StatusCode != -6 || fcRetried(nx) || hosts.lookups("nx.test") != 1 {
		t.Errorf("nx.test: status %d notes %q after %d lookups, want -6 at the first attempt", nx.StatusCode, nx.Annotations, hosts.lookups("nx.test"))
	}
	if ev := fcOne(t, events, "dns:nx.test"); ev.StatusCode != -1 || ev.HopPath != "P" || ev.WarcFilename != nil {
		t.Errorf("dns:nx.test: status %d hop %q warc %v, want -1 P without capture", ev.StatusCode, ev.HopPath, ev.WarcFilename)
	}
	down := fcOne(t, events, site.url("down.test", "/"))
	if down.StatusCode != -6 || !fcHasNote(down, "3t") || hosts.lookups("down.test") != 3 {
		t.Errorf("down.test: status %d notes %q after %d lookups, want -6 3t after 3", down.StatusCode, down.Annotations, hosts.lookups("down.test"))
	}
	if ev := fcOne(t, events, "dns:down.test"); ev.StatusCode != -1 {
		t.Errorf("dns:down.test: status %d, want -1", ev.StatusCode)
	}
}

// With the address guard on, a host resolving to 127.0.0.1 is never
// connected to: its URI finishes -2 (not retried: the refusal is final),
// and its DNS lookup is still recorded.
func TestAddressGuard(t *testing.T) {
	for _, tc := range []struct {
		policy     string
		wantSeed   int
		wantRobots int // 0: no robots.txt event
	}{
		{profile.RobotsIgnore, -2, 0},
		{profile.RobotsObey, -61, -2},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			e := setup(t)
			site := fcServe(t, func(w http.ResponseWriter, r *http.Request) { fcHTML(w, fcPage("")) })
			p := fcProfile()
			p.Robots.Policy = tc.policy
			seed := site.url("guarded.test", "/")
			events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("guarded.test"), seeds: []string{seed}, minURIs: 1, guarded: true})

			ev := fcOne(t, events, seed)
			if ev.StatusCode != tc.wantSeed || ev.WarcFilename != nil {
				t.Errorf("seed: status %d notes %q warc %v, want %d without capture", ev.StatusCode, ev.Annotations, ev.WarcFilename, tc.wantSeed)
			}
			if fcRetried(ev) {
				t.Errorf("seed retried (%q): an address refusal is not transient", ev.Annotations)
			}
			if n := site.accepts.Load(); n != 0 {
				t.Errorf("%d connections reached the guarded server", n)
			}
			if dns := fcOne(t, events, "dns:guarded.test"); dns.StatusCode != 1 {
				t.Errorf("dns:guarded.test: status %d, want 1", dns.StatusCode)
			}
			rob := events[site.url("guarded.test", "/robots.txt")]
			if tc.wantRobots == 0 && len(rob) != 0 || tc.wantRobots != 0 && (len(rob) != 1 || rob[0].StatusCode != tc.wantRobots) {
				t.Errorf("robots.txt events %+v, want status %d (0: none)", rob, tc.wantRobots)
			}
		})
	}
}
