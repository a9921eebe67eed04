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
	"github.com/trawler-crawl/trawler/pkg/streamname"
	"time"
)

// Config is the worker's deployment configuration.
type Config struct {
	Crawl  string `yaml:"crawl"`
	Stream string `yaml:"stream"`
	// ID is the worker identity (--worker-id); empty: from Ordinal, else
	// a leased slot. New settles it (identity.go).
	ID      string        `yaml:"id"`
	Threads int           `yaml:"threads"`
	DataDir string        `yaml:"data"`
	Lease   time.Duration `yaml:"lease"`
	// ClamdAddr overrides the profile's clamav.address (TRAWLER_CLAMD_ADDR).
	ClamdAddr string `yaml:"clamdAddr"`
	// Ordinal names the identity "w<N>": a number, or "hostname" for the
	// trailing -N of a StatefulSet pod's hostname; "" for none. ID wins
	// over it; without either a leased slot is taken (identity.go).
	Ordinal string `yaml:"ordinal"`
	// IdentityLease is the time of the Redis lease that keeps the identity
	// (and its files) this process's. 0 means the caller owns the whole
	// data directory (standalone, tests): ID is used unleased, with the
	// directory layout of a single worker.
	IdentityLease time.Duration `yaml:"identityLease"`
	// JanitorPeriod is how often the worker looks for open WARCs of dead
	// identities to recover (janitor.go); 0 turns the janitor off. Only
	// with an identity lease.
	JanitorPeriod time.Duration `yaml:"janitorPeriod"`
	// NoHandOff fetches every page in the worker even where the sheets
	// say render.handOff: no renderer runs to consume the hand-offs.
	NoHandOff bool `yaml:"noHandOff"`
	// Disk stops claims while free space is low (disk.go).
	Disk DiskConfig `yaml:"disk"`
}

// RegisterFlags registers the worker flags with their defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Crawl, "crawl", "fc", "crawl: fc (frequent) or dc (domain)")
	fs.StringVar(&c.Stream, "stream", "npld", "stream within the frequent crawl: npld or bypm (ignored for dc)")
	fs.StringVar(&c.ID, "worker-id", "", "worker identity: names its WARC files, crawl.log and spool directories, crawled events and control messages; "+
		"must be unique among live workers of the stream (a duplicate refuses to start); default: --worker-ordinal, else the lowest free leased slot w0, w1, ...")
	fs.StringVar(&c.Ordinal, "worker-ordinal", "", "identity w<N> from an ordinal: a number (compose replica, pod index) or 'hostname' for a StatefulSet pod's trailing -N")
	fs.DurationVar(&c.IdentityLease, "identity-lease", 30*time.Second, "Redis lease on the worker identity, renewed while running; a dead worker's identity is free this long after it died")
	fs.DurationVar(&c.JanitorPeriod, "janitor-period", time.Minute, "how often to recover open WARCs of dead workers sharing the data directory (0: never)")
	fs.IntVar(&c.Threads, "threads", 32, "number of concurrent crawl loops")
	fs.StringVar(&c.DataDir, "data", "./trawler-data", "directory for WARCs and crawl logs")
	fs.DurationVar(&c.Lease, "lease", 5*time.Minute, "lease on a claimed host; renewed while fetching")
	fs.BoolVar(&c.NoHandOff, "no-render-handoff", false, "fetch pages the sheets hand to the renderer (render.handOff) in the worker: for a crawl without a renderer")
	fs.StringVar(&c.ClamdAddr, "clamd-addr", "", "clamd address (tcp://host:port or unix:///path); overrides the profile's clamav.address")
	c.Disk.RegisterFlags(fs)
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if err := streamname.Validate(c.Crawl, c.Stream); err != nil {
		errs = append(errs, err)
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
	if c.IdentityLease < 0 || (c.IdentityLease > 0 && c.IdentityLease < 100*time.Millisecond) {
		errs = append(errs, errors.New("identity-lease must be 0 (data directory owned) or at least 100ms"))
	}
	if err := c.Disk.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.JanitorPeriod < 0 {
		errs = append(errs, errors.New("janitor-period must not be negative"))
	}
	if c.ID != "" && !validIdentity.MatchString(c.ID) {
		errs = append(errs, fmt.Errorf("worker-id %q: want letters, digits, '.', '_' or '-' (it names files)", c.ID))
	}
	return errors.Join(errs...)
}

// Name is the frontier and output name: "fc-npld" or "dc".
func (c Config) Name() string { return streamname.Name(c.Crawl, c.Stream) }

// stream is the stream whose history (recently-crawled DB) the worker
// reads and its events name: "npld" or "bypm" in the frequent crawl, ""
// in the domain crawl, which has none.
func (c Config) stream() string { return streamname.History(c.Crawl, c.Stream) }

func (c Config) topic(kind string) string { return streamname.Topic(c.Crawl, c.Stream, kind) }

// ToCrawlTopic is where launches arrive.
func (c Config) ToCrawlTopic() string { return c.topic("tocrawl") }

// ToRenderTopic carries the launch messages the worker hands to the
// renderer: fc.torender.npld, fc.torender.bypm, dc.torender.
func (c Config) ToRenderTopic() string { return c.topic("torender") }

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

// leased says whether identities are leased, so workers may share the
// data directory and each keeps to files named by its identity.
func (c Config) leased() bool { return c.IdentityLease > 0 }

// logDirOf is the crawl.log directory of identity id: a directory of its
// own under LogDir when workers may share the data directory (so the file
// keeps Heritrix's name, crawl.log), LogDir itself otherwise.
func (c Config) logDirOf(id string) string {
	if c.leased() {
		return c.LogDir() + "/" + id
	}
	return c.LogDir()
}

// spoolDirOf is where identity id spools large bodies and records: its own
// directory when workers may share the data directory.
func (c Config) spoolDirOf(id string) string {
	if c.leased() {
		return c.DataDir + "/spool/" + id
	}
	return c.DataDir + "/spool"
}
