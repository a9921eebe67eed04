package standalone

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/services/launcher"
)

// ErrFeedRejected ends a run before anything starts when every line of its
// local feeds is bad: there is nothing to launch (the command exits 3, as
// for a run that archived nothing because its input was refused).
var ErrFeedRejected = errors.New("every feed line was rejected")

// A standalone run checks what it was given before it starts anything
// (the data directory, the broker, Redis): a seed, a feed or a port that
// cannot work is an error naming the flag and the fix, and nothing has
// been created that the operator would then have to clean up.

// checkSeed accepts an absolute http(s) URL with a host, as the launch
// needs it; its error says how to fix the seed.
func checkSeed(s string) error {
	if !strings.Contains(s, "://") {
		fix := "http://" + s
		if !strings.Contains(s, "/") {
			fix += "/"
		}
		return fmt.Errorf("--seed %q: add a scheme: %s", s, fix)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("--seed %q: not a URL: %v", s, errors.Unwrap(err))
	}
	if sc := strings.ToLower(u.Scheme); sc != "http" && sc != "https" {
		return fmt.Errorf("--seed %q: want an http:// or https:// URL, not %s://", s, u.Scheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("--seed %q: no host name", s)
	}
	if _, err := hostkey.ForURL(s); err != nil {
		return fmt.Errorf("--seed %q: not a URL a crawl can fetch", s)
	}
	return nil
}

// checkListenAddr checks a listen address flag's form.
func checkListenAddr(flag, addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("--%s %q: want host:port, e.g. 127.0.0.1:9100", flag, addr)
	}
	return nil
}

// checkFeeds reads the --feed files and directories as the launch will,
// at now, without sending anything: a feed that cannot be read, or in
// which no line is a valid target, is an error naming the feed and its
// first bad lines. Feeds that launch nothing now (every schedule ended,
// or not started) are a warning with the reasons: the run may still
// continue an earlier crawl. Feeds given as URLs are fetched only by the
// launch itself.
func checkFeeds(ctx context.Context, cfg Config, now time.Time, log *slog.Logger) error {
	var local []string
	for _, f := range cfg.Feeds {
		if strings.HasPrefix(f, "http://") || strings.HasPrefix(f, "https://") {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("--feed %s: %w", f, errors.Unwrap(err))
		}
		local = append(local, f)
	}
	if len(local) == 0 {
		return nil
	}
	svc, err := launcher.New(launcher.Config{Feeds: local, Crawl: cfg.Crawl, Stream: cfg.Stream, TimeZone: cfg.TimeZone, DryRun: true},
		launcher.Deps{Out: io.Discard, KeyFunc: hostkey.ForURL, Clock: fixedClock{now}})
	if err != nil {
		return fmt.Errorf("--feed: %w", err)
	}
	sum, err := svc.RunOnce(ctx, now)
	if err != nil {
		return fmt.Errorf("--feed: %w", err)
	}
	if sum.Targets == 0 {
		return fmt.Errorf("--feed %s: %w: no valid target in %d bad lines%s (the format: docs/feeds.md)",
			strings.Join(local, ", "), ErrFeedRejected, sum.BadLines, firstErrors(sum.Errors, 3))
	}
	if sum.BadLines > 0 {
		log.Warn("feed lines skipped as bad", "bad_lines", sum.BadLines, "first", firstErrors(sum.Errors, 3))
	}
	if sum.Due == 0 {
		log.Warn("no feed target has a schedule running now: nothing is launched from the feeds "+
			"(a schedule runs from its startDate to its endDate; docs/feeds.md)",
			"targets", sum.Targets, "not_launched", skipped(sum.Skipped), "feed_time_zone", cfg.TimeZone)
	}
	return nil
}

// firstErrors formats up to n bad lines, ": f:1: reason; f:2: reason".
func firstErrors(errs []launcher.LineError, n int) string {
	if len(errs) == 0 {
		return ""
	}
	parts := make([]string, 0, n)
	for i, e := range errs {
		if i == n {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, e.Error())
	}
	return ": " + strings.Join(parts, "; ")
}

// skipped formats the skip reasons of a summary, "ended=1 not_started=2".
func skipped(m map[string]int) string {
	parts := make([]string, 0, len(m))
	for r, n := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", r, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// fixedClock reads one time: the feed check's launch time.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// listeners are a run's listen sockets, bound before anything starts so
// that a port in use fails the run at once, before the data directory,
// the broker and Redis exist (and without a summary of a crawl that never
// ran). Nil ones are not served.
type listeners struct {
	admin, cdx, kafka net.Listener
}

// bindListeners binds the admin listener, the CDX API's (unless
// --cdx-addr is empty) and the embedded broker's (unless --kafka names
// an external one). With --ports auto each address left at its default
// gets a free port on the same host instead.
func bindListeners(cfg Config) (*listeners, error) {
	l := &listeners{}
	for _, b := range []struct {
		flag, addr, def string
		dst             *net.Listener
		skip            bool
	}{
		{"admin-addr", cfg.AdminAddr, DefaultAdminAddr, &l.admin, false},
		{"cdx-addr", cfg.CDXAddr, DefaultCDXAddr, &l.cdx, cfg.CDXAddr == ""},
		{"kafka-listen", cfg.KafkaListen, DefaultKafkaListen, &l.kafka, cfg.Kafka != ""},
	} {
		if b.skip {
			continue
		}
		addr := b.addr
		if b.dst == &l.kafka && addr == "" {
			addr = "127.0.0.1:0" // the embedded broker's own default
		}
		if cfg.Ports == PortsAuto && addr == b.def {
			host, _, _ := net.SplitHostPort(addr)
			addr = net.JoinHostPort(host, "0")
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			l.Close()
			return nil, listenError(b.flag, addr, err)
		}
		*b.dst = ln
	}
	return l, nil
}

// listenError explains a listen failure, naming the flag.
func listenError(flag, addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("--%s %s: the port is in use (another crawl on this machine?): give --%s another port, or --ports auto to have free ones chosen",
			flag, addr, flag)
	}
	return fmt.Errorf("--%s %s: %w", flag, addr, err)
}

// Close closes the listeners no server took over (closing one twice is
// harmless).
func (l *listeners) Close() {
	for _, ln := range []net.Listener{l.admin, l.cdx, l.kafka} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// cdxAddr is where the CDX API listens, "" when it is off.
func (l *listeners) cdxAddr() string {
	if l.cdx == nil {
		return ""
	}
	return l.cdx.Addr().String()
}

// printListeners says where the run listens, at its start.
func printListeners(w io.Writer, dataDir string, e Endpoints, crawl string) {
	if w == nil {
		return
	}
	admin := dialable(e.Admin)
	fmt.Fprintf(w, "Listening (also in %s):\n", filepath.Join(dataDir, EndpointsFile))
	fmt.Fprintf(w, "  admin  http://%s/  /metrics, /healthz, /readyz; /api/v1/ for trawler ctl --api http://%s\n", admin, admin)
	fmt.Fprintf(w, "  console  http://%s/console/  operator console; log in with the token in %s\n", admin, e.AdminTokenFile)
	if e.CDX != "" {
		fmt.Fprintf(w, "  CDX    http://%s/%s  OutbackCDX API of the crawl's index\n", dialable(e.CDX), crawl)
	}
	fmt.Fprintf(w, "  Kafka  %s\n", strings.Join(e.Kafka, ","))
	fmt.Fprintf(w, "  Redis  %s\n", e.Redis)
}
