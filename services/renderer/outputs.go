package renderer

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/browser"
	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// open recovers WARCs this identity left open (a crash), opens the WARC
// writers and crawl.log, and starts the browser.
func (r *Renderer) open(ctx context.Context) error {
	host, _ := os.Hostname()
	openWriter := func(dir, prefix, kind string) (*warcwriter.Writer, error) {
		recovered, err := warcwriter.RecoverOpenHost(dir, r.cfg.ID, r.log)
		if err != nil {
			return nil, fmt.Errorf("recover open WARCs in %s: %w", dir, err)
		}
		for _, f := range recovered {
			r.log.Warn("closed WARC left open by a previous run", "file", f.Name, "records", f.Records)
			r.announce(f)
		}
		return warcwriter.New(warcwriter.Config{
			Dir: dir, Prefix: prefix, MaxFileSize: r.prof.WARC.MaxFileSizeBytes, CompressionLevel: r.prof.WARC.CompressionLevel,
			Hostname: r.cfg.ID, CrawlName: r.prof.Crawl.Name, Operator: r.prof.Crawl.Operator,
			RobotsPolicy: r.prof.Robots.Policy, UserAgent: r.ua, Software: "trawler/" + r.version + " renderer (" + host + ")",
			Parallel: 1, Version: r.prof.WARC.Version,
		}, warcwriter.WithOnClose(r.announce), warcwriter.WithLogger(r.log.With("warcs", kind)),
			warcwriter.WithRegisterer(prometheus.WrapRegistererWith(prometheus.Labels{"kind": "render-" + kind}, r.reg)),
			warcwriter.WithBufferDir(r.cfg.SpoolDir()))
	}
	var err error
	if r.warc, err = openWriter(r.cfg.WARCDir(), r.prefix, "normal"); err != nil {
		return fmt.Errorf("renderer warc writer: %w", err)
	}
	if r.viral, err = openWriter(r.cfg.ViralDir(), r.prefix+"-VIRAL", "viral"); err != nil {
		return errors.Join(fmt.Errorf("renderer viral warc writer: %w", err), r.warc.Close())
	}
	if r.clog, err = crawllog.Open(crawllog.Options{Dir: r.cfg.LogDir(), Logger: r.log}); err != nil {
		return errors.Join(fmt.Errorf("renderer crawl.log: %w", err), r.warc.Close(), r.viral.Close())
	}
	r.pool, err = browser.New(ctx, browser.Config{
		ExecPath: r.cfg.Chromium, Tabs: r.cfg.Tabs, PageTimeout: r.cfg.PageTimeout,
		SPKIHashes: []string{r.ca.SPKIHash()}, UserAgent: r.ua, DataDir: r.cfg.SpoolDir(), ReapStale: true, NoSandbox: r.cfg.NoSandbox,
		Log: r.log.With("component", "browser"),
	})
	if err != nil {
		return errors.Join(fmt.Errorf("renderer browser: %w", err), r.closeOutputs())
	}
	pool := r.pool
	if err := r.reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "trawler_renderer_browser_restarts_total", Help: "Browser restarts after a crash or a hung page.",
	}, func() float64 { return float64(pool.Restarts()) })); err != nil {
		r.log.Warn("browser restarts metric not registered", "err", err)
	}
	close(r.ready)
	return nil
}

// closeOutputs stops the browser and closes the WARC writers and crawl.log.
func (r *Renderer) closeOutputs() error {
	var errs []error
	if r.pool != nil {
		errs = append(errs, r.pool.Close())
	}
	if r.warc != nil {
		errs = append(errs, r.warc.Close())
	}
	if r.viral != nil {
		errs = append(errs, r.viral.Close())
	}
	if r.clog != nil {
		errs = append(errs, r.clog.Close())
	}
	return errors.Join(errs...)
}

// announce publishes a closed WARC's notice on <crawl>.warcs, as workers do.
func (r *Renderer) announce(f warcwriter.ClosedFile) { r.announceFor(f, r.cfg.ID) }
