package qa

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/mitm"
	"github.com/trawler-crawl/trawler/pkg/replay"
)

// Job is one QA run over a crawl's archive: the pages its crawl.log
// selection keeps, replayed and scored, the report written, and the
// missing URLs sent to a patch crawl when asked.
type Job struct {
	// Index and WARCDirs are the archive: the crawl's CDX index and the
	// directories its WARC files are in.
	Index    replay.Index
	WARCDirs []string
	// LogFiles are the crawl.log files the pages are read from.
	LogFiles  []string
	Selection Selection
	// Crawl, Source and Launch name the report.
	Crawl, Source, Launch string

	Browser     Renderer
	CA          *mitm.CA
	UserAgent   string
	ScrollSteps int
	// Workers is how many pages are asked of the browser at once.
	Workers int
	// OutDir receives ReportJSON and ReportHTML; empty writes nothing.
	OutDir string
	// Patch, when set, sends the missing URLs to its topic.
	Patch *PatchTarget

	Metrics *Metrics
	Log     *slog.Logger
}

// PatchTarget is where a patch crawl goes.
type PatchTarget struct {
	Client *kgo.Client
	Topic  string
	Bounds PatchBounds
}

// Run runs the job. Bad crawl.log lines are counted, listed in the
// report and skipped; a page that cannot be replayed is a severe result.
func (j Job) Run(ctx context.Context) (*Report, *Patch, error) {
	if j.Log == nil {
		j.Log = slog.New(slog.DiscardHandler)
	}
	if len(j.LogFiles) == 0 {
		return nil, nil, errors.New("qa: no crawl.log files to read pages from")
	}
	pages, bad, err := ReadPages(j.LogFiles, j.Selection)
	if err != nil {
		return nil, nil, err
	}
	j.Metrics.BadLines(len(bad))
	for _, b := range bad {
		j.Log.Warn("qa: crawl.log line skipped", "line", b.Error())
	}
	r, err := replay.New(replay.Options{Index: j.Index, Records: replay.NewDirs(j.WARCDirs...)})
	if err != nil {
		return nil, nil, fmt.Errorf("qa: %w", err)
	}
	ch, err := NewChecker(Options{Resolver: r, Browser: j.Browser, CA: j.CA, UserAgent: j.UserAgent,
		ScrollSteps: j.ScrollSteps, Metrics: j.Metrics, Log: j.Log})
	if err != nil {
		return nil, nil, err
	}
	j.Log.Info("qa: replaying pages", "pages", len(pages), "bad_log_lines", len(bad))
	rep := NewReport(ch.Run(ctx, pages, j.Workers), bad, time.Now())
	if err := ctx.Err(); err != nil {
		return rep, nil, fmt.Errorf("qa: interrupted: %w", err)
	}
	rep.Crawl, rep.Source, rep.Launch = j.Crawl, j.Source, j.Launch
	j.Metrics.Observe(rep)
	if j.OutDir != "" {
		if err := rep.WriteFiles(j.OutDir); err != nil {
			return rep, nil, err
		}
	}
	j.Log.Info("qa: report", "summary", rep.Summary(), "dir", j.OutDir)
	if j.Patch == nil {
		return rep, nil, nil
	}
	p, err := PatchLaunches(rep, j.Patch.Bounds, time.Now())
	if err != nil {
		return rep, nil, err
	}
	if err := Publish(ctx, j.Patch.Client, j.Patch.Topic, p, j.Metrics); err != nil {
		return rep, &p, err
	}
	j.Log.Info("qa: patch crawl sent", "topic", j.Patch.Topic, "urls", len(p.Launches), "dropped", p.Dropped)
	return rep, &p, nil
}
