// Package standalone runs a whole crawl in one process: an embedded Kafka
// broker and Redis (or external ones), the launcher, a worker and the
// cdxwriter, composed from the same services the cluster runs.
package standalone

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/console"
)

// Default listen addresses, all on loopback.
const (
	DefaultAdminAddr   = "127.0.0.1:9100"
	DefaultCDXAddr     = "127.0.0.1:8081"
	DefaultKafkaListen = "127.0.0.1:9092"
)

// Values of Config.Ports.
const (
	// PortsFixed listens where the addresses say ("" means the same).
	PortsFixed = "fixed"
	// PortsAuto gives each listener left at its default address a free
	// port on the same host, so that crawls on one machine do not clash;
	// the run prints them at start and writes them to standalone.json.
	PortsAuto = "auto"
)

// DefaultDataDir is --data's default, where `trawler ctl` looks for a
// running standalone when told of no other.
const DefaultDataDir = "./trawler-data"

// Config is the standalone configuration.
type Config struct {
	DataDir   string
	Seeds     []string
	Feeds     []string
	UntilIdle bool
	// UntilIdleIgnoreRetries (with UntilIdle) also ends the run when all
	// that is left waits for a retry (hosts whose name does not resolve,
	// robots.txt timing out): by default --until-idle waits those out.
	UntilIdleIgnoreRetries bool
	// Relaunch launches the seeds as a new launch: with a launch timestamp
	// inherited to every depth, so they and everything they reach are
	// crawled again once, whatever the recrawl interval. The timestamp is
	// the next whole second, waited for (see launchSecond).
	Relaunch bool
	// Kafka and Redis name external servers; empty means embedded.
	Kafka         string
	Redis         string
	RedisPassword string
	// KafkaListen is the embedded broker's loopback address, so kcat and
	// other clients can attach.
	KafkaListen string
	AdminAddr   string
	// Ports is PortsFixed (also "") or PortsAuto.
	Ports string
	// AdminTokenFile holds the bearer token of the admin API (/api/v1/)
	// and of the CDX API's writes; empty: one is generated into
	// <data>/admin.token (AdminTokenFile), or reused from there.
	AdminTokenFile string
	// AdminReadOnlyTokenFile holds a second admin API token that may
	// only read (GET); empty: none.
	AdminReadOnlyTokenFile string
	// CDXAddr serves the CDX index with the OutbackCDX API; empty: not served.
	CDXAddr string
	// CDXWritesOpen lets the CDX API's writes through without a token,
	// as OutbackCDX does; off, they need the admin token.
	CDXWritesOpen bool
	// CDXForwardURL is an external OutbackCDX that also gets every CDX
	// line (posted to <url>/<crawl>, as the cluster's cdxwriter does with
	// --forward-url); empty: none. A run ends only once forwarding has
	// caught up too.
	CDXForwardURL string
	// CDXForwardTokenFile holds the bearer token sent with forwarded
	// lines, for an index that needs one (another Trawler's); empty: none.
	CDXForwardTokenFile string
	// CDXForwardFailures also forwards failed fetches as UKWA's Heritrix
	// did (failure-status-code/<status> lines).
	CDXForwardFailures bool
	// ClamdAddr scans every capture with this clamd, overriding the
	// profile's clamav.address.
	ClamdAddr string
	Crawl     string
	Stream    string
	Threads   int
	TimeZone  string
	// Partitions for topics created by the standalone run (0 = as declared
	// in kafka-topics/). One process gains nothing from 16.
	Partitions int
	// Render is auto (also ""), on or off: whether a renderer runs in
	// process for pages the profile hands off (render.go).
	Render string
	// RenderTabs is how many pages render at once; 0 means 2.
	RenderTabs int
	// MinFreeDiskBytes stops claiming while the data directory's
	// filesystem has less free space (the worker's disk guard); 0: never.
	MinFreeDiskBytes int64
	Chromium         string
	// Console configures the operator console on the admin listener
	// (/console/): replay links, sessions.
	Console console.Config
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

// RegisterFlags registers the standalone flags with their defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.DataDir, "data", DefaultDataDir, "data directory: broker, Redis, WARCs, logs, CDX")
	fs.Var((*stringList)(&c.Seeds), "seed", "seed URL to crawl (repeatable, or comma-separated); loopback, private and link-local addresses are refused "+
		"unless the profile sets fetch.allowPrivateAddresses: true (or --set fetch.allowPrivateAddresses=true)")
	fs.Var((*stringList)(&c.Feeds), "feed", "W3ACT crawl feed (file, directory or URL) whose active targets are launched (repeatable)")
	fs.BoolVar(&c.Relaunch, "relaunch", false, "launch the seeds as a new launch: crawl them and all they reach again (default: continue the crawl in --data)")
	fs.BoolVar(&c.UntilIdle, "until-idle", false, "exit once nothing is queued or in flight, after writing the summary; URIs waiting for a retry (retryDelaySeconds) are waited for. "+
		"Exit status 3: the run archived nothing because every seed or feed line was refused (address guard) or rejected")
	fs.BoolVar(&c.UntilIdleIgnoreRetries, "until-idle-ignore-retries", false, "with --until-idle, also exit when every URI left waits for a retry (they stay queued for a later run)")
	fs.StringVar(&c.Kafka, "kafka", "", "external Kafka brokers (comma-separated); empty runs the embedded broker")
	fs.StringVar(&c.Redis, "redis", "", "external Redis address; empty runs an embedded Redis")
	fs.StringVar(&c.RedisPassword, "redis-password", "", "password for the external Redis")
	fs.StringVar(&c.KafkaListen, "kafka-listen", DefaultKafkaListen, "loopback address of the embedded broker")
	fs.StringVar(&c.CDXAddr, "cdx-addr", DefaultCDXAddr, "OutbackCDX-compatible API of the crawl's CDX index (empty: not served)")
	fs.StringVar(&c.CDXForwardURL, "cdx-forward-url", "", "external OutbackCDX base URL that also gets every CDX line, as <url>/<crawl> (empty: none)")
	fs.StringVar(&c.CDXForwardTokenFile, "cdx-forward-token-file", "", "with --cdx-forward-url, file holding the bearer token sent with the lines, for an index that needs one (another Trawler's)")
	fs.BoolVar(&c.CDXWritesOpen, "cdx-writes-open", false, "let the CDX API's writes (POST ingest, delete, checkpoint) through without a token, as OutbackCDX does (default: they need the admin token)")
	fs.BoolVar(&c.CDXForwardFailures, "cdx-forward-failures", true, "with --cdx-forward-url, also forward failed fetches as failure-status-code/<status> lines, as UKWA's Heritrix did")
	fs.StringVar(&c.AdminAddr, "admin-addr", DefaultAdminAddr, "admin listener: /metrics, /healthz, /readyz")
	fs.StringVar(&c.Ports, "ports", PortsFixed, "fixed: listen on --admin-addr, --cdx-addr and --kafka-listen; auto: each of them left at its default gets a free port "+
		"(for a second crawl on this machine), printed at start and written to <data>/"+EndpointsFile)
	fs.StringVar(&c.AdminTokenFile, "admin-token-file", "", "file holding the bearer token of the admin API (/api/v1/) and of CDX writes, re-read when it changes (empty: one is generated into <data>/"+AdminTokenFile+", mode 0600)")
	fs.StringVar(&c.AdminReadOnlyTokenFile, "admin-readonly-token-file", "", "file holding a second admin API token that may only read (GET), for viewers (empty: none)")
	fs.StringVar(&c.Crawl, "crawl", "fc", "crawl: fc or dc")
	fs.StringVar(&c.Stream, "stream", "npld", "stream: npld or bypm")
	fs.IntVar(&c.Threads, "threads", 32, "crawl loops")
	fs.StringVar(&c.ClamdAddr, "clamd-addr", "", "clamd address (tcp://host:port or unix:///path); overrides the profile's clamav.address")
	fs.StringVar(&c.TimeZone, "feed-time-zone", "Europe/London", "time zone of crawl-feed dates")
	fs.IntVar(&c.Partitions, "partitions", 4, "partitions for topics the standalone run creates (0 = as declared)")
	fs.StringVar(&c.Render, "render", renderAuto, "render pages the profile hands off (render.handOff) in headless Chromium: auto (when Chromium is installed), on, off")
	fs.IntVar(&c.RenderTabs, "render-tabs", 2, "pages rendered at once")
	fs.Int64Var(&c.MinFreeDiskBytes, "min-free-disk-bytes", 256<<20, "stop claiming while the data directory's filesystem has less free space than this; resumes when space returns (0: never)")
	c.Console.RegisterFlags(fs)
	fs.StringVar(&c.Chromium, "chromium", "", "Chromium binary (default: chromium, chromium-browser or google-chrome in PATH)")
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("data: required"))
	}
	if c.Threads < 1 {
		errs = append(errs, fmt.Errorf("threads %d: must be >= 1", c.Threads))
	}
	if c.Render != "" && c.Render != renderAuto && c.Render != renderOn && c.Render != renderOff {
		errs = append(errs, fmt.Errorf("render %q: want auto, on or off", c.Render))
	}
	if c.RenderTabs < 0 || c.RenderTabs > 64 {
		errs = append(errs, fmt.Errorf("render-tabs %d: want 1..64 (0: 2)", c.RenderTabs))
	}
	if c.CDXForwardTokenFile != "" && c.CDXForwardURL == "" {
		errs = append(errs, errors.New("cdx-forward-token-file: set, but --cdx-forward-url is not"))
	}
	if c.Partitions < 0 {
		errs = append(errs, fmt.Errorf("partitions %d: must be >= 0", c.Partitions))
	}
	if c.Ports != "" && c.Ports != PortsFixed && c.Ports != PortsAuto {
		errs = append(errs, fmt.Errorf("--ports %q: want %s or %s", c.Ports, PortsFixed, PortsAuto))
	}
	for _, a := range [][2]string{{"admin-addr", c.AdminAddr}, {"cdx-addr", c.CDXAddr}, {"kafka-listen", c.KafkaListen}} {
		if a[1] != "" {
			errs = append(errs, checkListenAddr(a[0], a[1]))
		}
	}
	for _, s := range c.Seeds {
		errs = append(errs, checkSeed(s))
	}
	errs = append(errs, c.Console.Validate())
	if len(c.Feeds) > 0 {
		if _, err := time.LoadLocation(c.TimeZone); err != nil || c.TimeZone == "" {
			errs = append(errs, fmt.Errorf("--feed-time-zone %q: want an IANA time zone, e.g. Europe/London or UTC", c.TimeZone))
		}
	}
	return errors.Join(errs...)
}
