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

// Defaults for the Config fields whose zero value means "default".
const (
	DefaultRefreshDepth     = 1
	DefaultBatchSize        = 1000
	DefaultProgressEvery    = 50000
	DefaultProgressInterval = 10 * time.Second
	DefaultRecordTTL        = 72 * time.Hour
	DefaultClaimTTL         = 10 * time.Minute
	DefaultRetryDelay       = 5 * time.Minute
)

// Config configures the launcher role. A zero tuning field (refresh depth,
// batch size, progress, TTLs, retry delay) means its default; a zero
// CatchUpHours means no catching up.
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
	// Hourly launches only the targets due in the run's hour (see Due).
	// Without it a run launches every target with an active schedule, as
	// the single-machine mode does for a first crawl. The launcher command
	// sets it unless --all-active is given.
	Hourly bool `yaml:"hourly"`
	// DryRun prints launch messages instead of producing them and records
	// nothing.
	DryRun bool `yaml:"dry_run"`
	// RenderTargets are ids of targets whose seeds are rendered in a
	// browser (annotated WebRenderThis).
	RenderTargets []int64 `yaml:"render_targets"`
	// RefreshDepth is how many hops from a seed inherit its launch
	// timestamp and so are refetched.
	RefreshDepth int `yaml:"refresh_depth"`
	// BatchSize is how many launches are recorded and produced together.
	BatchSize int `yaml:"batch_size"`
	// ProgressEvery and ProgressInterval: a progress line is logged after
	// every ProgressEvery targets or ProgressInterval, whichever is first.
	ProgressEvery    int           `yaml:"progress_every"`
	ProgressInterval time.Duration `yaml:"progress_interval"`
	// RecordTTL is how long the record of a launch is kept: re-running an
	// hour within it sends nothing again.
	RecordTTL time.Duration `yaml:"record_ttl"`
	// ClaimTTL bounds how long a launch claimed by a run that died before
	// producing it blocks a rerun.
	ClaimTTL time.Duration `yaml:"claim_ttl"`
	// CatchUpHours is how many hours before the current one Serve runs
	// again after a start or a failed run (each hour at most once, thanks
	// to the launch records).
	CatchUpHours int `yaml:"catch_up_hours"`
	// RetryDelay is how soon Serve retries after a failed run.
	RetryDelay time.Duration `yaml:"retry_delay"`
}

// RegisterFlags registers the launcher's flags on fs, under "",
// and sets the defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Feeds, c.RenderTargets = nil, nil
	c.Hourly = true
	fs.Var((*stringList)(&c.Feeds), "feed",
		"crawl feed: a JSONL file, a directory of *.jsonl files or an HTTP(S) URL (repeatable)")
	fs.StringVar(&c.Crawl, "crawl", CrawlFrequent, `crawl to launch into: "fc" (frequent) or "dc" (domain)`)
	fs.StringVar(&c.Stream, "stream", "npld", `frequent-crawl stream, e.g. "npld" or "bypm" (ignored for dc)`)
	fs.StringVar(&c.TimeZone, "time-zone", "Europe/London", "IANA time zone of the feed's schedule dates")
	fs.Var((*notBool)(&c.Hourly), "all-active",
		"launch every target with an active schedule, ignoring the day and hour rule (a first launch)")
	fs.BoolVar(&c.DryRun, "dry-run", false, "print launch messages as JSON lines instead of producing them; record nothing")
	fs.Var((*idList)(&c.RenderTargets), "render-target",
		"id of a target whose seeds are rendered in a browser (repeatable, or comma-separated)")
	fs.IntVar(&c.RefreshDepth, "refresh-depth", DefaultRefreshDepth, "hops from a seed that inherit its launch timestamp (refetched)")
	fs.IntVar(&c.BatchSize, "batch-size", DefaultBatchSize, "launches recorded and produced together")
	fs.IntVar(&c.ProgressEvery, "progress-every", DefaultProgressEvery, "log progress after this many targets")
	fs.DurationVar(&c.ProgressInterval, "progress-interval", DefaultProgressInterval, "log progress at least this often")
	fs.DurationVar(&c.RecordTTL, "record-ttl", DefaultRecordTTL, "how long launch records are kept in Redis (re-running an hour within it sends nothing)")
	fs.DurationVar(&c.ClaimTTL, "claim-ttl", DefaultClaimTTL, "how long a launch claimed by a run that died blocks a rerun")
	fs.IntVar(&c.CatchUpHours, "catch-up-hours", 1, "serve: earlier hours re-run after a start or a failure (each at most once)")
	fs.DurationVar(&c.RetryDelay, "retry-delay", DefaultRetryDelay, "serve: wait before retrying a failed run")
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
	errs = append(errs, c.validateNumbers()...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("launcher config: %w", err)
	}
	return nil
}

// validateNumbers checks the tuning fields; zero means the default.
func (c Config) validateNumbers() []error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"refresh depth", int64(c.RefreshDepth)}, {"batch size", int64(c.BatchSize)},
		{"progress every", int64(c.ProgressEvery)}, {"progress interval", int64(c.ProgressInterval)},
		{"record TTL", int64(c.RecordTTL)}, {"claim TTL", int64(c.ClaimTTL)},
		{"catch-up hours", int64(c.CatchUpHours)}, {"retry delay", int64(c.RetryDelay)},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s is negative", f.name))
		}
	}
	if c.withDefaults().RecordTTL <= time.Duration(c.CatchUpHours+1)*time.Hour {
		errs = append(errs, fmt.Errorf("record TTL %v must outlast the %d catch-up hours and the current one, or a re-run hour would launch again",
			c.withDefaults().RecordTTL, c.CatchUpHours))
	}
	return errs
}

// withDefaults returns c with zero tuning fields set to their defaults.
func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.RefreshDepth, DefaultRefreshDepth)
	def(&c.BatchSize, DefaultBatchSize)
	def(&c.ProgressEvery, DefaultProgressEvery)
	defDur(&c.ProgressInterval, DefaultProgressInterval)
	defDur(&c.RecordTTL, DefaultRecordTTL)
	defDur(&c.ClaimTTL, DefaultClaimTTL)
	defDur(&c.RetryDelay, DefaultRetryDelay)
	return c
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

// notBool is a boolean flag that stores the opposite of its value, so a
// setting that is on by default can be turned off by a positive flag
// (--all-active clears Hourly).
type notBool bool

func (b *notBool) String() string {
	if b == nil {
		return "false"
	}
	return strconv.FormatBool(!bool(*b))
}

func (b *notBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%q: want true or false", s)
	}
	*b = notBool(!v)
	return nil
}

// IsBoolFlag lets the flag be given without a value.
func (b *notBool) IsBoolFlag() bool { return true }
