package launcher

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Crawl names (ARCHITECTURE.md 3).
const (
	CrawlFrequent = "fc"
	CrawlDomain   = "dc"
)

// Config configures the launcher role.
type Config struct {
	// Feeds are crawl-feed locations: files, directories of *.jsonl files
	// or HTTP(S) URLs.
	Feeds []string `yaml:"feeds"`
	// Crawl is "fc" (frequent) or "dc" (domain).
	Crawl string `yaml:"crawl"`
	// Stream is the frequent crawl's stream (e.g. "npld", "bypm"); the
	// domain crawl has one topic and ignores it.
	Stream string `yaml:"stream"`
	// TimeZone is the IANA zone the feed's wall-clock dates are in.
	TimeZone string `yaml:"time_zone"`
	// DryRun prints launch messages instead of producing them.
	DryRun bool `yaml:"dry_run"`
	// RenderTargets are ids of targets whose seeds are rendered in a
	// browser (annotated WebRenderThis).
	RenderTargets []int64 `yaml:"render_targets"`
}

// RegisterFlags registers the launcher's flags on fs, under "",
// and sets the defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Feeds, c.RenderTargets = nil, nil
	fs.Var((*stringList)(&c.Feeds), "feed",
		"crawl feed: a JSONL file, a directory of *.jsonl files or an HTTP(S) URL (repeatable)")
	fs.StringVar(&c.Crawl, "crawl", CrawlFrequent, `crawl to launch into: "fc" (frequent) or "dc" (domain)`)
	fs.StringVar(&c.Stream, "stream", "npld", `frequent-crawl stream, e.g. "npld" or "bypm" (ignored for dc)`)
	fs.StringVar(&c.TimeZone, "time-zone", "Europe/London", "IANA time zone of the feed's schedule dates")
	fs.BoolVar(&c.DryRun, "dry-run", false, "print launch messages as JSON lines instead of producing them")
	fs.Var((*idList)(&c.RenderTargets), "render-target",
		"id of a target whose seeds are rendered in a browser (repeatable, or comma-separated)")
}

var streamName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Validate reports every configuration error at once.
func (c Config) Validate() error {
	var errs []error
	if len(c.Feeds) == 0 {
		errs = append(errs, errors.New("no feed given (--feed)"))
	}
	for i, f := range c.Feeds {
		if strings.TrimSpace(f) == "" {
			errs = append(errs, fmt.Errorf("feed %d is empty", i+1))
		}
	}
	switch c.Crawl {
	case CrawlFrequent:
		if !streamName.MatchString(c.Stream) {
			errs = append(errs, fmt.Errorf("stream %q: want lower-case letters, digits, - or _", c.Stream))
		}
	case CrawlDomain:
	default:
		errs = append(errs, fmt.Errorf("crawl %q: want %q or %q", c.Crawl, CrawlFrequent, CrawlDomain))
	}
	if c.TimeZone == "" {
		errs = append(errs, errors.New("no time zone given (--time-zone)"))
	} else if _, err := time.LoadLocation(c.TimeZone); err != nil {
		errs = append(errs, fmt.Errorf("time zone %q: %w", c.TimeZone, err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("launcher config: %w", err)
	}
	return nil
}

// Topic returns the tocrawl topic the configured crawl reads launches from.
func (c Config) Topic() string {
	if c.Crawl == CrawlDomain {
		return "dc.tocrawl"
	}
	return c.Crawl + ".tocrawl." + c.Stream
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// idList is a repeatable flag of target ids, each use a comma-separated list.
type idList []int64

func (l *idList) String() string {
	if l == nil {
		return ""
	}
	parts := make([]string, len(*l))
	for i, id := range *l {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

func (l *idList) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		id, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil {
			return fmt.Errorf("target id %q: want a whole number", part)
		}
		*l = append(*l, id)
	}
	return nil
}
