package console

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/explain"
)

// urlData is the explain page.
type urlData struct {
	URL, Via, Hops string
	Report         *explain.Report
	// Replay holds each capture's replay link, in Report.Captures' order;
	// empty strings without a wayback template.
	Replay []string
	// Titles holds each HTML capture's <title>, read from the archive
	// (titles.go), in the same order; "" where none was read.
	Titles []string
	Error  string
}

func (c *Console) urlPage(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	d := urlData{URL: strings.TrimSpace(q.Get("u")), Via: q.Get("via"), Hops: q.Get("hops")}
	if d.URL == "" {
		c.show(w, r, s, "url", "url", "Explain a URL", d)
		return
	}
	if c.d.API.Explainer == nil {
		d.Error = "explain is not available on this role"
		c.show(w, r, s, "url", "url", "Explain a URL", d)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	rep, err := c.d.API.Explainer.Explain(ctx, explain.Request{URL: d.URL, Via: d.Via, Hops: d.Hops})
	switch {
	case errors.Is(err, explain.ErrBadURL):
		d.Error = err.Error()
	case err != nil:
		d.Error = "explain: " + err.Error()
	default:
		d.Report = rep
		for _, cp := range rep.Captures {
			d.Replay = append(d.Replay, c.replayLink(cp))
		}
		d.Titles = c.titles(ctx, rep.Captures)
	}
	c.show(w, r, s, "url", "url", "Explain "+d.URL, d)
}

// replayLink fills the wayback template for a capture; "" without one.
// The URL goes in as it is, as wayback tools take it.
func (c *Console) replayLink(cp explain.Capture) string {
	if c.cfg.WaybackURL == "" {
		return ""
	}
	return strings.NewReplacer("{timestamp}", cp.Timestamp, "{url}", cp.URL).Replace(c.cfg.WaybackURL)
}
