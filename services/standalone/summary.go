package standalone

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/services/cdxwriter"
	"github.com/trawler-crawl/trawler/services/launcher"
	"github.com/trawler-crawl/trawler/services/worker"
)

// Summary describes a standalone run's crawl so far: totals are crawl-wide
// and so include earlier runs on the same data directory.
type Summary struct {
	URIs      int64
	Bytes     int64
	ByStatus  map[int]int64
	WARCFiles []string
	WARCDir   string
	CDXPath   string
	CDXLines  int64
	// ReportsDir holds Heritrix's end-of-crawl reports.
	ReportsDir string
	Elapsed    time.Duration
	RedisKind  string
	// Launched counts the launch messages this run sent (seeds and feed
	// targets); Feed is the launcher's report on the --feed files.
	Launched int
	Feed     *launcher.Summary
	// EndedBy says why the run ended: "idle", the crawl limit that ended
	// it (maxDocumentsDownload, maxBytesDownload, maxTimeSeconds), or ""
	// when it was interrupted.
	EndedBy string
	// Queued and InFlight are what the frontier still holds; a later run
	// on the same data directory crawls them.
	Queued, InFlight int64
	// AdaptiveSaved counts by launch id the fetches adaptive recrawl
	// saved (frontier.recrawlAdaptive).
	AdaptiveSaved map[string]int64
	// RedisCommands is Redis's INFO commandstats at the end of the run
	// (calls and server time by command, those scripts make included), so
	// a benchmark can say what the crawl asked of Redis per page.
	RedisCommands []redisconn.CommandStat
	// Phases is where the run's wall time went, in order, up to the
	// reports (the embedded broker and Redis stop after): start-up, the
	// crawl and its idle confirmation, and the stop.
	Phases []Phase
	// What this run archived and the address guard refused (nothing.go).
	refusalSummary
}

func summarise(ctx context.Context, cfg Config, wcfg worker.Config, ccfg cdxwriter.Config, w *worker.Worker, rdb redis.UniversalClient, ix *cdxindex.Index, elapsed time.Duration, redisKind string) (*Summary, error) {
	t, err := w.Totals(ctx)
	if err != nil {
		return nil, err
	}
	st, err := w.Frontier().Stats(ctx)
	if err != nil {
		return nil, err
	}
	s := &Summary{URIs: t.URIs, Bytes: t.Bytes, ByStatus: t.ByStatus, WARCDir: wcfg.WARCDir(), Queued: st.Queued, InFlight: st.InFlight,
		CDXPath: ccfg.IndexDir(), Elapsed: elapsed, RedisKind: redisKind, AdaptiveSaved: t.AdaptiveSaved,
		refusalSummary: refusalsOf(cfg, w)}
	s.WARCFiles, _ = filepath.Glob(filepath.Join(wcfg.WARCDir(), "*.warc.gz"))
	sort.Strings(s.WARCFiles)
	s.CDXLines, _ = ix.Count(ccfg.Collection())
	s.RedisCommands, _ = redisconn.CommandStats(ctx, rdb) // only for benchmarks: a failure leaves it empty
	return s, nil
}

// Phase is one step of a run and how long it took.
type Phase struct {
	Name string
	Took time.Duration
}

// phases times the steps of a run.
type phases struct {
	last time.Time
	list []Phase
}

func (p *phases) start(t time.Time) { p.last = t }

// mark ends the step called name now.
func (p *phases) mark(name string) {
	now := time.Now()
	p.list = append(p.list, Phase{Name: name, Took: now.Sub(p.last)})
	p.last = now
}

// Print writes the summary for a person.
func (s *Summary) Print(w io.Writer) {
	fmt.Fprintf(w, "Crawl summary (all runs on this data directory)\n")
	fmt.Fprintf(w, "  URIs finished: %d in %s this run\n", s.URIs, s.Elapsed.Round(time.Millisecond))
	codes := make([]int, 0, len(s.ByStatus))
	for c := range s.ByStatus {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d: %d", c, s.ByStatus[c]))
	}
	fmt.Fprintf(w, "  by status:     %s\n", strings.Join(parts, ", "))
	fmt.Fprintf(w, "  bytes:         %d\n", s.Bytes)
	switch s.EndedBy {
	case endedIdle:
		fmt.Fprintf(w, "  ended:         idle, nothing left to crawl\n")
	case endedInterrupted:
		fmt.Fprintf(w, "  ended:         interrupted; %d URIs queued, %d in flight, kept for the next run\n", s.Queued, s.InFlight)
	default:
		fmt.Fprintf(w, "  ended:         crawl limit %s reached; %d URIs left queued for the next run\n", s.EndedBy, s.Queued)
	}
	fmt.Fprintf(w, "  launched:      %d URLs this run\n", s.Launched)
	if f := s.Feed; f != nil {
		fmt.Fprintf(w, "  feeds:         %d targets read, %d launched, %d bad lines, skipped %v\n",
			f.Targets, f.Launched, f.BadLines, f.Skipped)
		for _, e := range f.Errors {
			fmt.Fprintf(w, "    %v\n", e)
		}
	}
	if len(s.AdaptiveSaved) > 0 {
		ids := make([]string, 0, len(s.AdaptiveSaved))
		for id := range s.AdaptiveSaved {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = fmt.Sprintf("launch %s: %d", cmp.Or(id, "(none)"), s.AdaptiveSaved[id])
		}
		fmt.Fprintf(w, "  adaptive recrawl saved fetches: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "  WARC files:    %d in %s\n", len(s.WARCFiles), s.WARCDir)
	fmt.Fprintf(w, "  CDX:           %d lines in %s\n", s.CDXLines, s.CDXPath)
	if s.ReportsDir != "" {
		fmt.Fprintf(w, "  reports:       %s (crawl.log under logs/)\n", s.ReportsDir)
	}
	s.printHint(w)
	if s.RedisKind == "miniredis" {
		fmt.Fprintf(w, "  note: no redis-server installed; the in-process miniredis does not persist the frontier\n")
	}
}
