package worker

import (
	"context"
	"time"

	"github.com/trawler-crawl/trawler/pkg/extract"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// outlinkList is one capture's outlinks on their way to the
// recently-crawled DB.
type outlinkList struct {
	url  string
	list *recentdb.Outlinks
}

// putOutlinks stores a coalesced batch of outlink lists in one pipeline.
func (w *Worker) putOutlinks(ctx context.Context, in []outlinkList) ([]struct{}, error) {
	urls := make([]string, len(in))
	lists := make([]*recentdb.Outlinks, len(in))
	for i, o := range in {
		urls[i], lists[i] = o.url, o.list
	}
	return make([]struct{}, len(in)), w.recent.PutOutlinks(ctx, urls, lists)
}

// keepOutlinks stores the links extracted from a full capture of t, so a
// later fetch that finds the page unchanged (304) can follow them. A page
// with no links stores an empty list, replacing what an older version of
// the page linked to. Failing to store them costs only that later
// recrawl's reach, so it is logged, not fatal.
func (w *Worker) keepOutlinks(ctx context.Context, t *task, start time.Time, links []extract.Link) {
	list := &recentdb.Outlinks{Time: start, Links: make([]recentdb.Link, 0, len(links))}
	for _, k := range links {
		list.Links = append(list.Links, recentdb.Link{Hop: k.Hop, URL: k.URL, Context: k.Context})
	}
	if _, err := w.outlinkPuts.Do(ctx, []outlinkList{{url: t.l.URL, list: list}}); err != nil {
		w.log.Warn("store outlinks for recrawls", "url", t.l.URL, "err", err)
	}
}

// unchangedOutlinks are the links of the original capture of t's URL,
// followed again when the server says the page has not changed: the same
// links with the same hops, through the same candidate chain as if they
// had been extracted now.
func (w *Worker) unchangedOutlinks(ctx context.Context, t *task) []extract.Link {
	kept := w.keptLinks(ctx, t.l.URL, "an unchanged page")
	links := make([]extract.Link, len(kept))
	for i, l := range kept {
		links[i] = extract.Link{URL: l.URL, Hop: l.Hop, Context: l.Context}
	}
	return links
}

// keptLinks reads the outlinks kept with url's last full capture, for a
// page that is not read again (what is named in the log). Links stored
// with hop letters the crawl does not know are dropped; a list that cannot
// be read costs only the reach below the page, so it is logged.
func (w *Worker) keptLinks(ctx context.Context, url, what string) []recentdb.Link {
	o, err := w.recent.Outlinks(ctx, url)
	if err != nil {
		w.log.Warn("read stored outlinks of "+what, "url", url, "err", err)
		return nil
	}
	if o == nil {
		return nil
	}
	links := make([]recentdb.Link, 0, len(o.Links))
	for _, l := range o.Links {
		if messages.IsHop(string(l.Hop)) {
			links = append(links, l)
		}
	}
	w.metrics.outlinksReplayed.Add(float64(len(links)))
	return links
}
