// Package worker is the crawl worker: it consumes launch messages, keeps the
// frontier in Redis, fetches politely, writes WARC records, extracts links
// and publishes a crawled event for every finished URI.
//
// The pipeline (one crawl loop per thread; ingest runs beside them):
//
//	tocrawl topic ─► ingest ─► candidate chain ─► frontier (Redis)
//	frontier ─► claim host ─► fetch ─► extract ─► WARC write ─► candidates
//	        ─► inscope + crawled events ─► complete (politeness delay)
//
// Workers keep no state but open WARC files: any worker may crawl any host,
// and a crashed worker's leases expire back into the frontier.
package worker

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
)

// Config is the worker's deployment configuration.
type Config struct {
	Crawl   string        `yaml:"crawl"`
	Stream  string        `yaml:"stream"`
	ID      string        `yaml:"id"`
	Threads int           `yaml:"threads"`
	DataDir string        `yaml:"data"`
	Lease   time.Duration `yaml:"lease"`
	// ClamdAddr overrides the profile's clamav.address (TRAWLER_CLAMD_ADDR).
	ClamdAddr string `yaml:"clamdAddr"`
}

// RegisterFlags registers the worker flags with their defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	host, _ := os.Hostname()
	if host == "" {
		host = "worker"
	}
	fs.StringVar(&c.Crawl, "crawl", "fc", "crawl: fc (frequent) or dc (domain)")
	fs.StringVar(&c.Stream, "stream", "npld", "stream within the frequent crawl: npld or bypm (ignored for dc)")
	fs.StringVar(&c.ID, "worker-id", host, "worker id used in WARC names, crawled events and control messages")
	fs.IntVar(&c.Threads, "threads", 32, "number of concurrent crawl loops")
	fs.StringVar(&c.DataDir, "data", "./trawler-data", "directory for WARCs and crawl logs")
	fs.DurationVar(&c.Lease, "lease", 5*time.Minute, "lease on a claimed host; renewed while fetching")
	fs.StringVar(&c.ClamdAddr, "clamd-addr", "", "clamd address (tcp://host:port or unix:///path); overrides the profile's clamav.address")
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	switch c.Crawl {
	case "fc":
		if c.Stream != "npld" && c.Stream != "bypm" {
			errs = append(errs, fmt.Errorf("stream %q: want npld or bypm", c.Stream))
		}
	case "dc":
	default:
		errs = append(errs, fmt.Errorf("crawl %q: want fc or dc", c.Crawl))
	}
	if c.Threads < 1 {
		errs = append(errs, errors.New("threads must be >= 1"))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("data directory is required"))
	}
	if c.Lease < time.Second {
		errs = append(errs, errors.New("lease must be at least 1s"))
	}
	return errors.Join(errs...)
}

// Name is the frontier and output name: "fc-npld" or "dc".
func (c Config) Name() string {
	if c.Crawl == "dc" {
		return "dc"
	}
	return c.Crawl + "-" + c.Stream
}

// stream is the stream whose history (recently-crawled DB) the worker
// reads and its events name: "npld" or "bypm" in the frequent crawl, ""
// in the domain crawl, which has none.
func (c Config) stream() string {
	if c.Crawl == "dc" {
		return ""
	}
	return c.Stream
}

func (c Config) topic(kind string) string {
	if c.Crawl == "dc" {
		return "dc." + kind
	}
	return c.Crawl + "." + kind + "." + c.Stream
}

// ToCrawlTopic is where launches arrive.
func (c Config) ToCrawlTopic() string { return c.topic("tocrawl") }

// InScopeTopic is the frontier journal.
func (c Config) InScopeTopic() string { return c.topic("inscope") }

// CrawledTopic receives crawled events.
func (c Config) CrawledTopic() string { return c.Crawl + ".crawled" }

// DLQTopic receives undecodable launch messages.
func (c Config) DLQTopic() string { return c.Crawl + ".dlq" }

// WARCDir is where this stream's WARCs are written.
func (c Config) WARCDir() string { return c.DataDir + "/warcs/" + c.Name() }

// ViralDir is where captures clamd flagged are written, in WARCs of their
// own ({prefix}-VIRAL-...), kept apart so they are never replayed by
// accident.
func (c Config) ViralDir() string { return c.DataDir + "/warcs-viral/" + c.Name() }

// LogDir holds crawl.log, beside the WARC directory.
func (c Config) LogDir() string { return c.DataDir + "/logs/" + c.Name() }
