package warcwriter

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"
)

// DefaultMaxFileSize is the size at which a WARC file is closed when
// Config.MaxFileSize is zero.
const DefaultMaxFileSize int64 = 1 << 30

// DefaultSoftware is written to the warcinfo record when Config.Software is empty.
const DefaultSoftware = "trawler"

// WARC versions the writer can write (Config.Version).
const (
	// Version10 is WARC/1.0, what Heritrix writes and what IA's tools
	// and hanzo warctools accept: 14-digit WARC-Date, 1.0 revisit profiles.
	Version10 = "1.0"
	// Version11 is WARC/1.1, with millisecond WARC-Date.
	Version11 = "1.1"
	// DefaultVersion is used when Config.Version is empty.
	DefaultVersion = Version10
)

// Config describes where and how WARC files are written. Zero values select
// the documented defaults.
type Config struct {
	// Dir is the directory the files are written to; it is created if missing.
	Dir string
	// Prefix starts every file name, e.g. "BL-NPLD" or "BL-NPLD-VIRAL".
	Prefix string
	// Name, when set, is the name of the one file the writer makes (its
	// warcinfo says so): a file whose name is fixed in advance, such as a
	// launch's metadata WARC that a retry must find again. Such a writer
	// never rotates and writes with Parallel 1.
	Name string
	// MaxFileSize closes a file once its size reaches this many bytes, at a
	// capture boundary. Default DefaultMaxFileSize (1 GiB).
	MaxFileSize int64
	// CompressionLevel is the gzip level 1..9; 0 selects gzip's default.
	CompressionLevel int
	// Hostname goes into file names and the warcinfo record. Default os.Hostname().
	Hostname string
	// CrawlName is written as "isPartOf" in the warcinfo record.
	CrawlName string
	// Operator is written as "operator" in the warcinfo record.
	Operator string
	// RobotsPolicy is written as "robots" in the warcinfo record.
	RobotsPolicy string
	// UserAgent is written as "http-header-user-agent" in the warcinfo record.
	UserAgent string
	// Software is written as "software" in the warcinfo record. Default DefaultSoftware.
	Software string
	// Parallel is the number of files open at once, each used by one writing
	// goroutine at a time. Default 1.
	Parallel int
	// Version is the WARC version written, Version10 or Version11.
	// Default DefaultVersion.
	Version string
}

// Validate reports the first setting that cannot work. Zero values are valid
// (they select defaults).
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("warcwriter config: Dir is empty")
	case c.Prefix == "":
		return errors.New("warcwriter config: Prefix is empty")
	case c.MaxFileSize < 0:
		return fmt.Errorf("warcwriter config: MaxFileSize %d is negative", c.MaxFileSize)
	case c.CompressionLevel != 0 && (c.CompressionLevel < gzip.BestSpeed || c.CompressionLevel > gzip.BestCompression):
		return fmt.Errorf("warcwriter config: CompressionLevel %d is outside 1..9", c.CompressionLevel)
	case c.Parallel < 0:
		return fmt.Errorf("warcwriter config: Parallel %d is negative", c.Parallel)
	}
	if c.Version != "" {
		if _, err := formatOf(c.Version); err != nil {
			return err
		}
	}
	if err := checkNamePart("Prefix", c.Prefix); err != nil {
		return err
	}
	if err := checkNamePart("Hostname", c.Hostname); err != nil {
		return err
	}
	if c.Name != "" {
		if err := checkNamePart("Name", c.Name); err != nil {
			return err
		}
		if !strings.HasSuffix(c.Name, warcSuffix) || c.Parallel > 1 {
			return fmt.Errorf("warcwriter config: Name %q must end %s, with Parallel 1", c.Name, warcSuffix)
		}
	}
	fields := [][2]string{{"CrawlName", c.CrawlName}, {"Operator", c.Operator},
		{"RobotsPolicy", c.RobotsPolicy}, {"UserAgent", c.UserAgent}, {"Software", c.Software}}
	for _, f := range fields {
		if strings.ContainsAny(f[1], "\r\n") {
			return fmt.Errorf("warcwriter config: %s contains a line break", f[0])
		}
	}
	return nil
}

// checkNamePart rejects values that would make a file name ambiguous or
// escape Dir.
func checkNamePart(field, v string) error {
	if strings.ContainsAny(v, "/\\\x00") || strings.ContainsFunc(v, isSpaceOrControl) {
		return fmt.Errorf("warcwriter config: %s %q must not contain slashes, spaces or control characters", field, v)
	}
	return nil
}

// withDefaults returns c with every zero value replaced by its default.
func (c Config) withDefaults() (Config, error) {
	if c.MaxFileSize == 0 {
		c.MaxFileSize = DefaultMaxFileSize
	}
	if c.Name != "" {
		c.MaxFileSize = math.MaxInt64 // one file: it never rotates
	}
	if c.CompressionLevel == 0 {
		c.CompressionLevel = gzip.DefaultCompression
	}
	if c.Parallel == 0 {
		c.Parallel = 1
	}
	if c.Software == "" {
		c.Software = DefaultSoftware
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return c, fmt.Errorf("warcwriter config: Hostname empty and os.Hostname failed: %w", err)
		}
		c.Hostname = h
		if err := checkNamePart("Hostname", h); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Option customises a Writer.
type Option func(*Writer)

// WithOnClose sets a function called once for every file that was closed and
// renamed to its final name (on rotation and on Close). It runs on the
// goroutine that closed the file, after the file has been released, so it
// should hand the notice off quickly (e.g. produce to Kafka asynchronously).
func WithOnClose(f func(ClosedFile)) Option {
	return func(w *Writer) { w.onClose = f }
}

// WithClock sets the clock used for file names, warcinfo dates and
// ClosedFile times. Default time.Now.
func WithClock(now func() time.Time) Option {
	return func(w *Writer) { w.now = now }
}

// WithLogger sets the logger. Default: discard.
func WithLogger(l *slog.Logger) Option {
	return func(w *Writer) { w.log = l }
}

// WithRegisterer registers the writer's metrics (trawler_warc_*) with reg.
// Default: metrics are kept but not registered.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(w *Writer) { w.reg = reg }
}

// WithSerialCounter shares a serial counter between writers, so that serial
// numbers stay unique across every Writer of a process (e.g. the normal and
// the viral writer of one worker). Default: a counter private to the Writer.
func WithSerialCounter(c *SerialCounter) Option {
	return func(w *Writer) { w.serial = c }
}

// WithBufferDir sets where gowarc spills records larger than 1 MiB while they
// are built. Default os.TempDir(). Do not use Config.Dir: movers would see the
// temporary files.
func WithBufferDir(dir string) Option {
	return func(w *Writer) { w.bufferDir = dir }
}

// SerialCounter hands out file serial numbers, starting at 0. It is safe for
// concurrent use; the zero value is ready.
type SerialCounter struct{ n atomic.Int64 }

// Next returns the next serial number.
func (c *SerialCounter) Next() int64 { return c.n.Add(1) - 1 }

// BufferFilePrefix starts the names of the files gowarc (v1.6.0's
// internal/diskbuffer) spills record blocks to in the buffer directory
// (WithBufferDir). gowarc removes them when a record is closed; a killed
// process leaves them, for spool.RemoveStale.
const BufferFilePrefix = "tmp-diskbuffer-"
