package cdxwriter

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"time"
)

// Defaults for Config.
const (
	DefaultCDXAddr = ":8081"
	// DefaultRecentTTL outlives the longest standard recrawl interval
	// (recrawl-365days): an entry that expired sooner would let a URL be
	// recrawled early.
	DefaultRecentTTL = 366 * 24 * time.Hour
	DefaultBatch     = 2000
	// DefaultConsumers lets decoding and the two stores' round trips of
	// one batch overlap with another's on a two-core machine.
	DefaultConsumers = 2
)

// Config is the cdxwriter's configuration.
type Config struct {
	// Crawl is the crawl whose crawled topic is indexed (fc, dc). It is
	// also the index collection and the recently-crawled DB's namespace.
	Crawl string `yaml:"crawl"`
	// Stream is the frequent crawl's stream (npld, bypm) whose history
	// gets the captures of events that name none (extra_info "stream"):
	// events of other producers, such as UKWA's Heritrix. Trawler's
	// workers name theirs. Ignored for dc, which has one history.
	Stream string `yaml:"stream"`
	// DataDir holds the Pebble index, under cdx/.
	DataDir string `yaml:"data"`
	// CDXAddr is the listen address of the OutbackCDX API; empty: none.
	CDXAddr string `yaml:"cdxAddr"`
	// CDXWritesOpen lets the API's writes (POST ingest, delete,
	// checkpoint) through without a token, as OutbackCDX does. Off, they
	// need the admin token, and with none configured are refused.
	CDXWritesOpen bool `yaml:"cdxWritesOpen"`
	// ForwardURL is an external OutbackCDX that also gets every line
	// (posted to <ForwardURL>/<Crawl>); empty: no forwarding.
	ForwardURL string `yaml:"forwardURL"`
	// ForwardTokenFile holds the bearer token sent with forwarded lines
	// (re-read when it changes), for an index that needs one, such as
	// another Trawler's; empty: none, as OutbackCDX needs none.
	ForwardTokenFile string `yaml:"forwardTokenFile"`
	// ForwardFailures also forwards failed fetches as UKWA's Heritrix did
	// (mimetype failure-status-code/<status>, status 599), so an
	// OutbackCDX used as the recently-seen store keeps seeing them.
	ForwardFailures bool `yaml:"forwardFailures"`
	// RecentTTL is how long a recently-crawled entry lives after its
	// newest capture; zero keeps entries forever.
	RecentTTL time.Duration `yaml:"recentTTL"`
	// Batch bounds the events applied per batch; zero: pkg/kafka's default.
	Batch int `yaml:"batch"`
	// Consumers is the number of group members run in this process, each
	// with its share of the partitions; zero: one.
	Consumers int `yaml:"consumers"`
}

// RegisterFlags sets the defaults and registers the cdxwriter flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Crawl, "crawl", "fc", "crawl whose crawled topic to index: fc or dc (also the index collection)")
	fs.StringVar(&c.Stream, "stream", "npld", "fc: the stream (npld or bypm) whose recently-crawled history gets events that name no stream")
	fs.StringVar(&c.DataDir, "data", "./trawler-data", "data directory; the CDX index is kept under <data>/cdx")
	fs.StringVar(&c.CDXAddr, "cdx-addr", DefaultCDXAddr, "listen address of the OutbackCDX-compatible query API (empty: none)")
	fs.BoolVar(&c.CDXWritesOpen, "cdx-writes-open", false, "let the CDX API's writes (POST ingest, delete, checkpoint) through without a token, as OutbackCDX does (default: they need --admin-token-file's token)")
	fs.StringVar(&c.ForwardURL, "forward-url", "", "external OutbackCDX base URL to forward CDX11 lines to, as <url>/<crawl> (empty: none)")
	fs.StringVar(&c.ForwardTokenFile, "forward-token-file", "", "file holding the bearer token sent with forwarded lines, for an index that needs one (another Trawler's); empty: none")
	fs.BoolVar(&c.ForwardFailures, "forward-failures", true, "also forward failed fetches as failure-status-code/<status> lines, as UKWA's Heritrix did")
	fs.DurationVar(&c.RecentTTL, "recent-ttl", DefaultRecentTTL, "how long a recently-crawled entry lives after its newest capture (0: forever)")
	fs.IntVar(&c.Batch, "batch", DefaultBatch, "crawled events applied per batch")
	fs.IntVar(&c.Consumers, "consumers", DefaultConsumers, "consumer group members in this process (partitions are shared among them)")
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.Crawl != "fc" && c.Crawl != "dc" {
		errs = append(errs, fmt.Errorf("cdxwriter: crawl %q: want fc or dc", c.Crawl))
	}
	if c.Crawl == "fc" && !knownStream(c.Stream) {
		errs = append(errs, fmt.Errorf("cdxwriter: stream %q: want npld or bypm", c.Stream))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("cdxwriter: data directory is required"))
	}
	if c.CDXAddr != "" {
		if _, _, err := net.SplitHostPort(c.CDXAddr); err != nil {
			errs = append(errs, fmt.Errorf("cdxwriter: cdx-addr %q: want [host]:port: %w", c.CDXAddr, err))
		}
	}
	if c.ForwardURL != "" {
		if u, err := url.Parse(c.ForwardURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("cdxwriter: forward-url %q: want http(s)://host[:port][/path]", c.ForwardURL))
		}
	}
	if c.ForwardTokenFile != "" && c.ForwardURL == "" {
		errs = append(errs, errors.New("cdxwriter: forward-token-file is set but forward-url is not"))
	}
	if c.RecentTTL < 0 {
		errs = append(errs, fmt.Errorf("cdxwriter: recent-ttl %s is negative", c.RecentTTL))
	}
	if c.Batch < 0 {
		errs = append(errs, fmt.Errorf("cdxwriter: batch %d is negative", c.Batch))
	}
	if c.Consumers < 0 {
		errs = append(errs, fmt.Errorf("cdxwriter: consumers %d is negative", c.Consumers))
	}
	return errors.Join(errs...)
}

// Group is the consumer group that indexes, also used for lag checks.
func (c Config) Group() string { return "trawler-cdxwriter-" + c.Crawl }

// ForwardGroup is the consumer group that forwards. It is separate so an
// external OutbackCDX that is down holds back only forwarding, never the
// index or the recently-crawled DB the crawl depends on.
func (c Config) ForwardGroup() string { return "trawler-cdxforward-" + c.Crawl }

// Topic is the crawled topic consumed.
func (c Config) Topic() string { return c.Crawl + ".crawled" }

// DLQTopic receives events that cannot be indexed.
func (c Config) DLQTopic() string { return c.Crawl + ".dlq" }

// Collection is the index collection the crawl's captures go to.
func (c Config) Collection() string { return c.Crawl }

// IndexDir is the Pebble index directory.
func (c Config) IndexDir() string { return filepath.Join(c.DataDir, "cdx", "index") }
