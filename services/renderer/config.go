// Package renderer is the browser-rendering role: it consumes the launch
// messages workers hand off (render.handOff), renders each page in headless
// Chromium behind a recording proxy, and archives what the browser loaded as
// the worker archives a fetch: WARC request/response (or revisit) and
// metadata records in its own files (prefix "<warc prefix>-WEBRENDER"),
// ClamAV scanning, crawled events and crawl.log lines. It adds a screenshot
// and the rendered DOM as resource records, and sends the rendered page's
// outlinks back to the crawl's tocrawl topic, where the worker's candidate
// chain (scope, seen filter) admits them.
//
//	<crawl>.torender.<stream> ─► render (browser pool) ─► per-page proxy
//	      (mitm: guard, exclusions, robots, resource cap) ─► fetch ─► scan
//	      ─► WARC ─► crawled event ─► screenshot + DOM records ─► outlinks
//	      ─► <crawl>.tocrawl.<stream> ─► commit
//
// A render that fails after its attempts goes back to tocrawl annotated
// renderFailed and is fetched plainly by a worker. The role also serves
// UKWA's webrender API (GET /render?url=...).
package renderer

import (
	"errors"
	"flag"
	"fmt"
	"github.com/trawler-crawl/trawler/pkg/streamname"
	"time"

	"github.com/trawler-crawl/trawler/pkg/identity"
)

// Config is the renderer's deployment configuration.
type Config struct {
	Crawl  string
	Stream string
	// ID names the renderer's WARC files and crawl.log; two live renderers
	// sharing a data directory need different ones. Empty: the lowest free
	// leased slot r0, r1, ... New settles it (identity.go).
	ID string
	// IdentityLease is the time of the Redis lease that keeps the identity
	// (and its files) this process's. 0 means the caller owns the
	// renderers' directories (standalone, tests): ID is used unleased.
	IdentityLease time.Duration
	// JanitorPeriod is how often the renderer looks for open WARCs of dead
	// renderers to recover (janitor.go); 0 turns the janitor off. Only
	// with an identity lease.
	JanitorPeriod time.Duration
	DataDir       string
	// Tabs is how many pages are rendered at once.
	Tabs int
	// PageTimeout bounds one render: navigation, settling, scrolling,
	// capture.
	PageTimeout time.Duration
	// Attempts is how often a page is tried (a crashed browser is
	// restarted between attempts) before it falls back to a plain fetch.
	Attempts int
	// Chromium is the browser binary; "" looks it up in PATH.
	Chromium string
	// NoSandbox runs Chromium without its sandbox (root, most containers).
	NoSandbox bool
	// ClamdAddr overrides the profile's clamav.address.
	ClamdAddr string
	// APIAddr serves GET /render (UKWA's webrender API); "" turns it off.
	APIAddr string
	// TokenFile holds the bearer token the render API requires.
	TokenFile string
	// YtDlp is the yt-dlp executable; "" looks for yt-dlp or youtube-dl
	// in PATH (pkg/media). Missing, media pages render without it.
	YtDlp string
	// QA turns on the render API's replay QA (GET /qa, qa.go).
	QA QAConfig
}

// RegisterFlags registers the renderer flags with their defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Crawl, "crawl", "fc", "crawl: fc (frequent) or dc (domain)")
	fs.StringVar(&c.Stream, "stream", "npld", "stream within the frequent crawl: npld or bypm (ignored for dc)")
	fs.StringVar(&c.ID, "renderer-id", "", "renderer identity: names its WARC files and crawl.log; "+
		"must be unique among live renderers of the stream (a duplicate refuses to start); default: the lowest free leased slot r0, r1, ...")
	fs.DurationVar(&c.IdentityLease, "identity-lease", 30*time.Second, "Redis lease on the renderer identity, renewed while running; a dead renderer's identity is free this long after it died")
	fs.DurationVar(&c.JanitorPeriod, "janitor-period", time.Minute, "how often to recover open WARCs of dead renderers sharing the data directory (0: never)")
	fs.StringVar(&c.DataDir, "data", "./trawler-data", "directory for WARCs and crawl logs")
	fs.IntVar(&c.Tabs, "tabs", 2, "pages rendered at once (browser tabs)")
	fs.DurationVar(&c.PageTimeout, "page-timeout", 60*time.Second, "time budget of one render")
	fs.IntVar(&c.Attempts, "attempts", 2, "renders of one page before it falls back to a plain fetch by a worker")
	fs.StringVar(&c.Chromium, "chromium", "", "Chromium binary (default: chromium, chromium-browser or google-chrome in PATH)")
	fs.BoolVar(&c.NoSandbox, "no-sandbox", true, "run Chromium without its sandbox (needed as root and in most containers)")
	fs.StringVar(&c.ClamdAddr, "clamd-addr", "", "clamd address (tcp://host:port or unix:///path); overrides the profile's clamav.address")
	fs.StringVar(&c.APIAddr, "api-addr", "", "listen address of the render API (GET /render?url=...); empty: off")
	fs.StringVar(&c.TokenFile, "api-token-file", "", "file holding the bearer token the render API requires (no token: the API stays off)")
	fs.StringVar(&c.YtDlp, "yt-dlp", "", "yt-dlp executable for media on rendered pages (default: yt-dlp or youtube-dl in PATH; missing: said once, pages still render)")
	c.QA.RegisterFlags(fs)
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if err := streamname.Validate(c.Crawl, c.Stream); err != nil {
		errs = append(errs, err)
	}
	if c.ID != "" && !identity.Valid(c.ID) {
		errs = append(errs, fmt.Errorf("renderer-id %q: want 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit (it names files)", c.ID))
	}
	switch {
	case c.IdentityLease < 0 || (c.IdentityLease > 0 && c.IdentityLease < 100*time.Millisecond):
		errs = append(errs, errors.New("identity-lease must be 0 (data directory owned) or at least 100ms"))
	case c.IdentityLease == 0 && c.ID == "":
		errs = append(errs, errors.New("renderer-id is required without an identity lease (identity-lease 0)"))
	}
	if c.JanitorPeriod < 0 {
		errs = append(errs, errors.New("janitor-period must not be negative"))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("data directory is required"))
	}
	if c.Tabs < 1 || c.Tabs > 64 {
		errs = append(errs, fmt.Errorf("tabs %d: want 1..64", c.Tabs))
	}
	if c.PageTimeout < time.Second {
		errs = append(errs, errors.New("page-timeout must be at least 1s"))
	}
	if c.Attempts < 1 {
		errs = append(errs, errors.New("attempts must be >= 1"))
	}
	errs = append(errs, c.QA.Validate())
	return errors.Join(errs...)
}

// name is the stream's frontier and output name: "fc-npld" or "dc".
func (c Config) name() string { return streamname.Name(c.Crawl, c.Stream) }

func (c Config) stream() string { return streamname.History(c.Crawl, c.Stream) }

func (c Config) topic(kind string) string { return streamname.Topic(c.Crawl, c.Stream, kind) }

// ToRenderTopic is consumed; ToCrawlTopic receives outlinks and fallbacks.
func (c Config) ToRenderTopic() string { return c.topic("torender") }

// ToCrawlTopic is the stream's launch topic.
func (c Config) ToCrawlTopic() string { return c.topic("tocrawl") }

// CrawledTopic receives one crawled event per capture.
func (c Config) CrawledTopic() string { return c.Crawl + ".crawled" }

// DLQTopic receives undecodable torender messages.
func (c Config) DLQTopic() string { return c.Crawl + ".dlq" }

// WARCDir holds the renderers' WARCs: a directory of their own beside the
// workers', so a worker's recovery of open files never takes a live
// renderer's.
func (c Config) WARCDir() string { return c.DataDir + "/warcs/" + c.name() + "-render" }

// ViralDir holds WARCs of infected content.
func (c Config) ViralDir() string { return c.DataDir + "/warcs-viral/" + c.name() + "-render" }

// LogDir holds the renderer's crawl.log.
func (c Config) LogDir() string { return c.DataDir + "/logs/" + c.name() + "-render-" + c.ID }

// SpoolDir holds spooled responses and WARC record buffers.
func (c Config) SpoolDir() string { return c.spoolDirOf(c.ID) }

// spoolDirOf is renderer identity id's spool directory (SpoolDir).
func (c Config) spoolDirOf(id string) string {
	return c.DataDir + "/spool/" + c.name() + "-render-" + id
}

// Group is the consumer group of the stream's renderers.
func (c Config) Group() string { return "trawler-renderer-" + c.name() }
