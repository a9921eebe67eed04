package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/trawler-crawl/trawler/pkg/surt"
)

// ExportConfig configures the exports the workers read.
type ExportConfig struct {
	// Feeds are crawl-feed locations, as in Config.
	Feeds []string `yaml:"feeds"`
	// Watched, when set, receives the seeds of watched targets (document
	// harvesting): one JSON object per seed and line (see WatchedSeed).
	Watched string `yaml:"watched"`
	// Excluded, when set, receives the SURT prefixes of NEVERCRAWL targets'
	// seeds as an excluded-SURTs file: "#" comments, then "+prefix" lines,
	// sorted, each once.
	Excluded string `yaml:"excluded"`
}

// RegisterFlags registers the export flags on fs.
func (c *ExportConfig) RegisterFlags(fs *flag.FlagSet) {
	c.Feeds = nil
	fs.Var((*stringList)(&c.Feeds), "feed", "crawl feed: a JSONL file, a directory of *.jsonl files or an HTTP(S) URL (repeatable)")
	fs.StringVar(&c.Watched, "watched", "", "write watched targets' seeds here, one JSON object per line")
	fs.StringVar(&c.Excluded, "excluded", "", "write NEVERCRAWL targets' SURT prefixes here (excluded-SURTs file)")
}

// Validate reports every configuration error at once.
func (c ExportConfig) Validate() error {
	var errs []error
	if len(c.Feeds) == 0 {
		errs = append(errs, errors.New("no feed given (--feed)"))
	}
	if c.Watched == "" && c.Excluded == "" {
		errs = append(errs, errors.New("nothing to export: give --watched FILE, --excluded FILE or both"))
	}
	if c.Watched != "" && c.Watched == c.Excluded {
		errs = append(errs, fmt.Errorf("--watched and --excluded are the same file %s", c.Watched))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("export config: %w", err)
	}
	return nil
}

// ExportDeps are what an export uses but does not own; all optional.
type ExportDeps struct {
	Logger     *slog.Logger
	HTTPClient *http.Client
	Clock      Clock
}

// WatchedSeed is one line of the watched export: a seed of a watched
// target, with what the document harvester needs to attribute documents
// found under it to the target.
type WatchedSeed struct {
	URL               string `json:"url"`
	TargetID          int64  `json:"targetId"`
	Title             string `json:"title"`
	Source            string `json:"source"` // the source tag its launches carry
	DocumentURLScheme string `json:"documentUrlScheme,omitempty"`
}

// ExportSummary reports one export.
type ExportSummary struct {
	Feeds            int
	Targets          int
	WatchedTargets   int
	WatchedSeeds     int
	ExcludedTargets  int
	ExcludedPrefixes int
	BadLines         int
	Errors           []LineError
}

// String is the one-line summary the launcher command prints.
func (s ExportSummary) String() string {
	return fmt.Sprintf("export: %d targets read, %d watched (%d seeds), %d NEVERCRAWL (%d SURT prefixes), %d bad lines",
		s.Targets, s.WatchedTargets, s.WatchedSeeds, s.ExcludedTargets, s.ExcludedPrefixes, s.BadLines)
}

// Export reads every feed and writes the requested files. Both are
// replaced only when every feed was read to the end: an exclusion list
// missing a feed would let blocked sites be crawled. Bad lines are skipped
// and counted as in a launch run. Watched targets are exported whatever
// their schedules; NEVERCRAWL targets are those NeverCrawled reports.
func Export(ctx context.Context, cfg ExportConfig, deps ExportDeps) (ExportSummary, error) {
	var sum ExportSummary
	if err := cfg.Validate(); err != nil {
		return sum, err
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Clock == nil {
		deps.Clock = systemClock{}
	}
	var watched *atomicFile
	if cfg.Watched != "" {
		var err error
		if watched, err = createAtomic(cfg.Watched); err != nil {
			return sum, fmt.Errorf("watched export: %w", err)
		}
		defer watched.Abort() // a no-op after Commit's rename
	}
	excluded := map[string]bool{}
	err := eachTarget(ctx, cfg.Feeds, deps, &sum, func(t Target) error {
		return exportTarget(t, watched, excluded, &sum)
	})
	if err != nil {
		return sum, fmt.Errorf("export (no file replaced): %w", err)
	}
	if watched != nil {
		if err := watched.Commit(); err != nil {
			return sum, fmt.Errorf("watched export: %w", err)
		}
	}
	if cfg.Excluded != "" {
		if err := writeExcluded(cfg.Excluded, excluded, &sum, deps.Clock.Now()); err != nil {
			return sum, err
		}
	}
	deps.Logger.Info("export finished", "targets", sum.Targets, "watched_seeds", sum.WatchedSeeds,
		"excluded_prefixes", sum.ExcludedPrefixes, "bad_lines", sum.BadLines)
	return sum, nil
}

func exportTarget(t Target, watched *atomicFile, excluded map[string]bool, sum *ExportSummary) error {
	sum.Targets++
	if watched != nil && t.Watched {
		sum.WatchedTargets++
		for _, seed := range t.Seeds {
			b, err := json.Marshal(WatchedSeed{URL: seed, TargetID: t.ID, Title: t.Title, Source: SourceTag(t),
				DocumentURLScheme: t.DocumentURLScheme})
			if err != nil {
				return fmt.Errorf("target %d: encode watched seed: %w", t.ID, err)
			}
			if err := watched.WriteString(string(b) + "\n"); err != nil {
				return err
			}
			sum.WatchedSeeds++
		}
	}
	if NeverCrawled(t) {
		sum.ExcludedTargets++
		for _, seed := range t.Seeds {
			if p := surt.ImpliedPrefix(seed); p != "" {
				excluded[p] = true
			}
		}
	}
	return nil
}

func writeExcluded(path string, prefixes map[string]bool, sum *ExportSummary, now time.Time) error {
	f, err := createSURTFile(path,
		"Excluded SURT prefixes: the seeds of NEVERCRAWL targets in the crawl feed.",
		fmt.Sprintf("Written by trawler launcher export at %s; one +prefix per line, read as a final REJECT.",
			now.UTC().Format(time.RFC3339)))
	if err != nil {
		return fmt.Errorf("excluded export: %w", err)
	}
	sorted := make([]string, 0, len(prefixes))
	for p := range prefixes {
		sorted = append(sorted, p)
	}
	slices.Sort(sorted)
	for _, p := range sorted {
		if err := f.AddPrefix(p); err != nil {
			f.Abort()
			return fmt.Errorf("excluded export: %w", err)
		}
	}
	sum.ExcludedPrefixes = f.n
	if err := f.Commit(); err != nil {
		return fmt.Errorf("excluded export: %w", err)
	}
	return nil
}

// eachTarget reads every feed, calling fn for each valid target. Unlike a
// launch run it stops at the first feed that cannot be read.
func eachTarget(ctx context.Context, feeds []string, deps ExportDeps, sum *ExportSummary, fn func(Target) error) error {
	for _, location := range feeds {
		files, err := ListFeeds(location)
		if err != nil {
			return err
		}
		for _, f := range files {
			rc, name, err := OpenFeed(ctx, f, deps.HTTPClient)
			if err != nil {
				return err
			}
			st, err := FeedReader{Logger: deps.Logger}.ReadFeed(ctx, rc, name, fn)
			_ = rc.Close()
			sum.Feeds++
			sum.BadLines += st.BadLines
			for _, e := range st.Errors {
				if len(sum.Errors) < maxSummaryErrors {
					sum.Errors = append(sum.Errors, e)
				}
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
