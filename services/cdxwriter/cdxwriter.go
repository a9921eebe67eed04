// Package cdxwriter turns crawled events into a CDX index.
//
// This first version appends one CDXJ line per captured record to
// <data>/cdx/<crawl>.cdxj, flushing and syncing the file before the batch's
// offsets are committed (at-least-once: a crash between the two can repeat
// lines, which CDX consumers tolerate). The embedded Pebble index with the
// OutbackCDX API and the recently-crawled DB replace it (ARCHITECTURE.md 11).
package cdxwriter

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Config is the cdxwriter's configuration.
type Config struct {
	Crawl   string `yaml:"crawl"`
	DataDir string `yaml:"data"`
}

// RegisterFlags registers the cdxwriter flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Crawl, "crawl", "fc", "crawl whose crawled topic to index: fc or dc")
	fs.StringVar(&c.DataDir, "data", "./trawler-data", "directory for the CDX index")
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.Crawl != "fc" && c.Crawl != "dc" {
		return fmt.Errorf("crawl %q: want fc or dc", c.Crawl)
	}
	if c.DataDir == "" {
		return errors.New("data directory is required")
	}
	return nil
}

// Group is the consumer group name, also used for lag checks.
func (c Config) Group() string { return "trawler-cdxwriter-" + c.Crawl }

// Topic is the crawled topic consumed.
func (c Config) Topic() string { return c.Crawl + ".crawled" }

// Path is the CDXJ file written.
func (c Config) Path() string { return filepath.Join(c.DataDir, "cdx", c.Crawl+".cdxj") }

// Writer consumes crawled events and writes CDXJ.
type Writer struct {
	cfg   Config
	kcfg  kafka.Config
	log   *slog.Logger
	reg   prometheus.Registerer
	lines prometheus.Counter
	skip  prometheus.Counter
	f     *os.File
	buf   *bufio.Writer
}

// New builds a cdxwriter.
func New(cfg Config, kcfg kafka.Config, log *slog.Logger, reg prometheus.Registerer) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("cdxwriter config: %w", err)
	}
	w := &Writer{cfg: cfg, kcfg: kcfg, log: log, reg: reg,
		lines: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_cdxwriter_lines_total", Help: "CDX lines written."}),
		skip: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_cdxwriter_events_skipped_total",
			Help: "Crawled events with no WARC record to index (failures, hand-offs)."}),
	}
	reg.MustRegister(w.lines, w.skip)
	return w, nil
}

// Run consumes until ctx is cancelled.
func (w *Writer) Run(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(w.cfg.Path()), 0o755); err != nil {
		return fmt.Errorf("cdx dir: %w", err)
	}
	f, err := os.OpenFile(w.cfg.Path(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open cdx %s: %w", w.cfg.Path(), err)
	}
	w.f, w.buf = f, bufio.NewWriterSize(f, 1<<16)
	c, err := kafka.NewConsumer(w.kcfg, kafka.ConsumerOptions[messages.Crawled]{
		Group: w.cfg.Group(), Topics: []string{w.cfg.Topic()}, DLQTopic: w.cfg.Crawl + ".dlq",
		Decode:     func(r *kgo.Record) (messages.Crawled, error) { return messages.DecodeCrawled(r.Value) },
		Handle:     w.handle,
		Logger:     w.log,
		Registerer: prometheus.WrapRegistererWith(prometheus.Labels{"consumer": "cdxwriter"}, w.reg),
	})
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("cdxwriter consumer: %w", err)
	}
	runErr := c.Run(ctx)
	if err := w.f.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("close cdx: %w", err)
	}
	return runErr
}

func (w *Writer) handle(_ context.Context, batch []kafka.Item[messages.Crawled]) error {
	for _, it := range batch {
		line, ok := cdx.FromCrawled(it.Value)
		if !ok {
			w.skip.Inc()
			continue
		}
		if _, err := w.buf.WriteString(line.CDXJ() + "\n"); err != nil {
			return fmt.Errorf("write cdx: %w", err)
		}
		w.lines.Inc()
	}
	if err := w.buf.Flush(); err != nil {
		return fmt.Errorf("flush cdx: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync cdx: %w", err)
	}
	return nil
}
