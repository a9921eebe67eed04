package renderer

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/trawler-crawl/trawler/pkg/qa"
	"github.com/trawler-crawl/trawler/pkg/replay"
)

// QAConfig is the renderer's replay QA mode: the render API answers GET
// /qa?url=URL[&timestamp=TS] by replaying the page from the archive in
// this renderer's browser pool, through a proxy that answers only from the
// archive, and scoring it (pkg/qa; docs/qa.md). It is how a cluster's
// renderers, which have the browsers, check pages; the archive is the
// crawl's CDX API and its shared WARC volume.
type QAConfig struct {
	// CDXURL is the crawl's OutbackCDX-compatible API (the cdxwriter's);
	// the collection is the crawl. Empty: the mode is off.
	CDXURL string
	// WARCDirs are where the index's WARC files are (closed files only).
	WARCDirs []string
}

// RegisterFlags registers the QA mode's flags.
func (c *QAConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.CDXURL, "qa-cdx-url", "", "replay QA on the render API (GET /qa?url=...): the crawl's CDX API (OutbackCDX-compatible); empty: off")
	fs.Func("qa-warc-dir", "with --qa-cdx-url, a directory of the crawl's WARC files (repeatable)", func(v string) error {
		c.WARCDirs = append(c.WARCDirs, v)
		return nil
	})
}

// Validate checks that the mode has both an index and WARC directories,
// or neither.
func (c QAConfig) Validate() error {
	switch {
	case c.CDXURL == "" && len(c.WARCDirs) == 0:
		return nil
	case c.CDXURL == "" || len(c.WARCDirs) == 0:
		return errors.New("qa-cdx-url and qa-warc-dir go together: replay QA needs the index and the WARC files")
	}
	if u, err := url.Parse(c.CDXURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("qa-cdx-url %q: want http(s)://host[:port]", c.CDXURL)
	}
	return nil
}

// buildQA makes the QA mode's resolver and metrics when it is on.
func (r *Renderer) buildQA() error {
	if r.cfg.QA.CDXURL == "" {
		return nil
	}
	ix, err := replay.NewOutbackCDX(replay.OutbackCDXOptions{URL: r.cfg.QA.CDXURL, Collection: r.cfg.Crawl})
	if err != nil {
		return fmt.Errorf("renderer qa: %w", err)
	}
	if r.qaResolver, err = replay.New(replay.Options{Index: ix, Records: replay.NewDirs(r.cfg.QA.WARCDirs...)}); err != nil {
		return fmt.Errorf("renderer qa: %w", err)
	}
	if r.qaMetrics, err = qa.NewMetrics(r.reg); err != nil {
		return fmt.Errorf("renderer qa: %w", err)
	}
	return nil
}

// serveQA replays one page from the archive and answers its QA result
// (qa.PageResult) as JSON. timestamp (1 to 14 digits) picks the capture;
// default now, the latest.
func (r *Renderer) serveQA(w http.ResponseWriter, req *http.Request) {
	if r.qaResolver == nil {
		http.Error(w, "replay QA is off: start the renderer with --qa-cdx-url and --qa-warc-dir", http.StatusNotFound)
		return
	}
	if req.Method != http.MethodGet {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	q := req.URL.Query()
	u, err := url.Parse(q.Get("url"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		http.Error(w, fmt.Sprintf("url %q: not an http(s) URL", q.Get("url")), http.StatusBadRequest)
		return
	}
	ts := q.Get("timestamp")
	if ts == "" {
		ts = time.Now().UTC().Format("20060102150405")
	}
	if _, err := replay.Timestamp14(ts); err != nil {
		http.Error(w, fmt.Sprintf("timestamp %q: %v", ts, err), http.StatusBadRequest)
		return
	}
	select {
	case <-r.ready:
	case <-req.Context().Done():
		return
	}
	ch, err := qa.NewChecker(qa.Options{Resolver: r.qaResolver, Browser: r.pool, CA: r.ca, UserAgent: r.ua,
		ScrollSteps: r.prof.Render.ScrollSteps, Metrics: r.qaMetrics, Log: r.log})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	res := ch.Check(req.Context(), qa.Page{URL: q.Get("url"), Timestamp: ts})
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}
