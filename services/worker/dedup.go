package worker

import (
	"context"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/internal/coalesce"
	"github.com/trawler-crawl/trawler/pkg/dedup"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// digestIndex is the stream's digest index (pkg/dedup) with the threads'
// lookups and puts coalesced into shared pipelines, as the
// recently-crawled lookups are.
type digestIndex struct {
	lookups *coalesce.Group[string, dedup.Ref]
	puts    *coalesce.Group[dedup.Put, struct{}]
	log     *slog.Logger
}

// newDigestIndex opens the digest index of history. Sheets turn
// dedup.acrossUrls on and off per site; the bound is the profile's.
func newDigestIndex(rdb redis.UniversalClient, history string, p profile.Profile, log *slog.Logger) (*digestIndex, error) {
	ix, err := dedup.New(rdb, dedup.Options{History: history, MaxEntries: max(p.Dedup.DigestIndexMaxEntries, 1)})
	if err != nil {
		return nil, err
	}
	put := func(ctx context.Context, ps []dedup.Put) ([]struct{}, error) {
		return make([]struct{}, len(ps)), ix.Put(ctx, ps)
	}
	return &digestIndex{
		lookups: &coalesce.Group[string, dedup.Ref]{Run: ix.Lookup, MaxBatch: maxLookupBatch},
		puts:    &coalesce.Group[dedup.Put, struct{}]{Run: put, MaxBatch: maxLookupBatch},
		log:     log,
	}, nil
}

// revisitOf returns the revisit to write instead of a response: for a 2xx
// whose payload digest equals the last full record of the URL
// (identical-payload-digest), or a 304 answering our conditional request
// (server-not-modified); nil otherwise. The dedup horizon and minimum size
// (profile dedup) keep a payload in full; a 304 is only asked for within
// the horizon (conditional).
func revisitOf(t *task, resp *fetch.Response) *warcwriter.Revisit {
	o := t.prior.Original
	if o == nil {
		return nil
	}
	d := t.eff.Profile.Dedup
	switch {
	case resp.StatusCode == 304 && o.Digest != "":
		return &warcwriter.Revisit{RefersToURI: t.l.URL, RefersToDate: o.Time, RefersToRecordID: o.RecordID, NotModified: true}
	case dedupable(resp, d) && o.Digest == resp.PayloadDigest && d.SamePeriod(o.Time, resp.Start):
		return &warcwriter.Revisit{RefersToURI: t.l.URL, RefersToDate: o.Time, RefersToRecordID: o.RecordID}
	}
	return nil
}

// dedupable reports whether resp's payload may be written as an
// identical-payload-digest revisit at all: a 2xx with a digest, not empty,
// and not under the profile's minimum size.
func dedupable(resp *fetch.Response, d profile.Dedup) bool {
	return resp.PayloadDigest != "" && resp.StatusCode >= 200 && resp.StatusCode < 300 && d.Worthwhile(resp.Payload.Size())
}

// crossURL returns an identical-payload-digest revisit of the record of
// another URL that holds resp's payload (the digest index), or nil. A
// digest index that cannot be read costs a full record, never the capture.
func (w *Worker) crossURL(ctx context.Context, t *task, resp *fetch.Response) *warcwriter.Revisit {
	d := t.eff.Profile.Dedup
	if !d.AcrossURLs || !dedupable(resp, d) {
		return nil
	}
	refs, err := w.digests.lookups.Do(ctx, []string{resp.PayloadDigest})
	if err != nil {
		w.log.Warn("digest index lookup; writing the payload in full", "url", t.l.URL, "err", err)
		return nil
	}
	r := refs[0]
	if !r.Found() || !d.SamePeriod(r.Time, resp.Start) || r.Time.After(resp.Start) {
		return nil
	}
	w.metrics.crossURLRevisits.Inc()
	return &warcwriter.Revisit{RefersToURI: r.URL, RefersToDate: r.Time, RefersToRecordID: r.RecordID}
}

// enterDigest puts the full record just written (or the same-URL original
// a revisit named) in the digest index, so later captures of the payload
// under other URLs refer to it.
func (w *Worker) enterDigest(ctx context.Context, t *task, resp *fetch.Response, rv *warcwriter.Revisit, loc warcwriter.Location) {
	d := t.eff.Profile.Dedup
	if !d.AcrossURLs || !dedupable(resp, d) {
		return
	}
	ref := dedup.Ref{URL: t.l.URL, Time: resp.Start, RecordID: loc.RecordID}
	if rv != nil {
		if rv.RefersToURI != t.l.URL {
			return // the index named the original
		}
		ref = dedup.Ref{URL: rv.RefersToURI, Time: rv.RefersToDate, RecordID: rv.RefersToRecordID}
	}
	put := dedup.Put{Digest: resp.PayloadDigest, Ref: ref, NotBefore: d.PeriodStart(resp.Start)}
	if _, err := w.digests.puts.Do(ctx, []dedup.Put{put}); err != nil {
		w.log.Warn("digest index put; later copies of this payload will be written in full", "url", t.l.URL, "err", err)
	}
}
