package provenance

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/extsort"
	"github.com/trawler-crawl/trawler/pkg/streamname"
)

// Defaults for Config.
const (
	DefaultPollInterval = 10 * time.Second
	// DefaultSettle is how long a launch with nothing queued or in flight
	// must also have had no new event before it is sealed: its last
	// events may still be on their way through the crawled topic.
	DefaultSettle = 60 * time.Second
	DefaultBatch  = 1000
)

// Config is the provenance role's configuration.
type Config struct {
	// Crawl is fc or dc; Stream (fc) names the worker directories read by
	// default.
	Crawl  string `yaml:"crawl"`
	Stream string `yaml:"stream"`
	// DataDir holds report files under provenance/<crawl>/.
	DataDir string `yaml:"data"`
	// WARCDir receives the metadata WARCs; empty: the stream's WARC
	// directory under DataDir, as the worker's.
	WARCDir string `yaml:"warcDir"`
	// LogDirs are the crawl.log directories read for the launches' lines;
	// empty: the stream's log directory under DataDir.
	LogDirs []string `yaml:"crawlLogDirs"`
	// DocWARCDirs are where the document finder looks for WARC records
	// (for Link rel="up"); empty: the stream's content WARC directories.
	DocWARCDirs []string `yaml:"docWarcDirs"`
	// Watched is the launcher's watched export; empty: no document finder.
	Watched string `yaml:"watched"`
	// WARCPrefix starts metadata WARC names (then "-METADATA"); empty:
	// the profile's WARC prefix.
	WARCPrefix string `yaml:"warcPrefix"`
	// Hostname is the {host} part of metadata WARC names; empty:
	// "provenance", the same on every restart.
	Hostname     string        `yaml:"hostname"`
	PollInterval time.Duration `yaml:"pollInterval"`
	Settle       time.Duration `yaml:"settle"`
	Batch        int           `yaml:"batch"`
	// SortRunBytes bounds each external sort's run in memory when a
	// streaming launch's metadata WARC is built; 0: extsort's default.
	SortRunBytes int `yaml:"sortRunBytes"`
}

// RegisterFlags sets the defaults and registers the flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Crawl, "crawl", "fc", "crawl whose crawled topic is read: fc or dc")
	fs.StringVar(&c.Stream, "stream", "npld", "fc: the stream whose WARC and crawl.log directories are the defaults")
	fs.StringVar(&c.DataDir, "data", "./trawler-data", "data directory; reports go under <data>/provenance/<crawl>")
	fs.StringVar(&c.WARCDir, "warc-dir", "", "directory the metadata WARCs are written to (default: <data>/warcs/<crawl>-<stream>-metadata)")
	fs.Func("crawl-log-dir", "crawl.log directory read for launches' lines (repeatable; default: the stream's under --data)", func(v string) error {
		c.LogDirs = append(c.LogDirs, v)
		return nil
	})
	fs.Func("doc-warc-dir", "directory holding the WARCs that documents point into (repeatable; default: the stream's content WARC directories under --data)", func(v string) error {
		c.DocWARCDirs = append(c.DocWARCDirs, v)
		return nil
	})
	fs.StringVar(&c.Watched, "watched", "", "the launcher's watched export (JSONL); empty: the document finder is off")
	fs.StringVar(&c.WARCPrefix, "warc-prefix", "", "metadata WARC name prefix (default: the profile's warc.prefix), followed by -METADATA")
	fs.StringVar(&c.Hostname, "hostname", "", "host part of metadata WARC names; keep it fixed across restarts (default: provenance)")
	fs.DurationVar(&c.PollInterval, "poll-interval", DefaultPollInterval, "how often launches are checked for completion")
	fs.DurationVar(&c.Settle, "settle", DefaultSettle, "how long a launch with nothing queued or in flight must be quiet before it is sealed")
	fs.IntVar(&c.Batch, "batch", DefaultBatch, "crawled events handled per batch")
	fs.IntVar(&c.SortRunBytes, "sort-run-bytes", extsort.DefaultRunBytes, "streaming launches: bytes of lines each external sort keeps in memory before writing a run to disk")
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.Crawl != "fc" && c.Crawl != "dc" {
		errs = append(errs, fmt.Errorf("provenance: crawl %q: want fc or dc", c.Crawl))
	}
	if c.Crawl == "fc" && c.Stream != "npld" && c.Stream != "bypm" {
		errs = append(errs, fmt.Errorf("provenance: stream %q: want npld or bypm", c.Stream))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("provenance: data directory is required"))
	}
	if c.PollInterval <= 0 {
		errs = append(errs, fmt.Errorf("provenance: poll-interval %s must be positive", c.PollInterval))
	}
	if c.Settle < 0 {
		errs = append(errs, fmt.Errorf("provenance: settle %s is negative", c.Settle))
	}
	if c.SortRunBytes < 0 {
		errs = append(errs, fmt.Errorf("provenance: sort-run-bytes %d is negative", c.SortRunBytes))
	}
	if c.Batch < 0 {
		errs = append(errs, fmt.Errorf("provenance: batch %d is negative", c.Batch))
	}
	if strings.ContainsAny(c.WARCPrefix+c.Hostname, "/\\ \t\r\n") {
		errs = append(errs, errors.New("provenance: warc-prefix and hostname must not hold slashes or spaces"))
	}
	return errors.Join(errs...)
}

// name is the worker directories' name for the crawl and stream.
func (c Config) name() string { return streamname.Name(c.Crawl, c.Stream) }

// warcDir is where metadata WARCs go: beside the stream's content WARCs,
// in a directory of their own (as NetarchiveSuite keeps a job's metadata
// files apart), so that what reads or recovers content WARCs never takes
// them for captures.
func (c Config) warcDir() string {
	if c.WARCDir != "" {
		return c.WARCDir
	}
	return filepath.Join(c.DataDir, "warcs", c.name()+"-metadata")
}

// logDirs are the crawl.log directories read.
func (c Config) logDirs() []string {
	if len(c.LogDirs) > 0 {
		return c.LogDirs
	}
	// The workers' (and their slot subdirectories), and the renderers'.
	return []string{filepath.Join(c.DataDir, "logs", c.name()), filepath.Join(c.DataDir, "logs", c.name()+"-render-*")}
}

// docWARCDirs are where document records are read.
func (c Config) docWARCDirs() []string {
	if len(c.DocWARCDirs) > 0 {
		return c.DocWARCDirs
	}
	// The stream's content WARCs (the workers' and the renderers').
	return []string{filepath.Join(c.DataDir, "warcs", c.name()), filepath.Join(c.DataDir, "warcs", c.name()+"-render")}
}

// ReportDir is where the reports of all launches go.
func (c Config) ReportDir() string { return filepath.Join(c.DataDir, "provenance", c.Crawl) }

// DocumentsFile is the JSONL file of documents found.
func (c Config) DocumentsFile() string { return filepath.Join(c.ReportDir(), "documents.jsonl") }

// Group is the statistics consumer group.
func (c Config) Group() string { return "trawler-provenance-" + c.Crawl }

// DocsGroup is the document finder's consumer group.
func (c Config) DocsGroup() string { return "trawler-docfinder-" + c.Crawl }

// CrawledTopic is the topic read.
func (c Config) CrawledTopic() string { return c.Crawl + ".crawled" }

// StatsTopic receives harvest statistics.
func (c Config) StatsTopic() string { return c.Crawl + ".harveststats" }

// DocumentsTopic receives documents.
func (c Config) DocumentsTopic() string { return c.Crawl + ".documents" }

// WARCsTopic receives the metadata WARCs' notices.
func (c Config) WARCsTopic() string { return c.Crawl + ".warcs" }

// DLQTopic receives undecodable events.
func (c Config) DLQTopic() string { return c.Crawl + ".dlq" }
