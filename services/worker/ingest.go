package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// ingest takes a batch of launch messages from the tocrawl topic through
// the candidate chain into the frontier. Messages that cannot be crawled
// (non-GET, bad URL) are logged with their position, counted and sent to
// the DLQ; the batch is committed only once every admitted URI is in the
// frontier and the inscope journal.
func (w *Worker) ingest(ctx context.Context, batch []kafka.Item[messages.Launch]) error {
	var launches []messages.Launch
	var rejects []*kgo.Record
	for _, it := range batch {
		l := it.Value
		pos := fmt.Sprintf("%s/%d@%d", it.Record.Topic, it.Record.Partition, it.Record.Offset)
		if !l.IsGET() {
			w.log.Info("launch skipped: only GET is crawled", "url", l.URL, "method", l.Method, "pos", pos)
			w.metrics.launchesSkipped.WithLabelValues("method").Inc()
			continue
		}
		norm, err := uri.Normalize(l.URL)
		if err != nil {
			w.log.Warn("launch rejected: bad URL", "url", l.URL, "err", err, "pos", pos)
			w.metrics.launchesSkipped.WithLabelValues("bad_url").Inc()
			rejects = append(rejects, kafka.DLQRecord(w.cfg.DLQTopic(), w.group(), it.Record, err))
			continue
		}
		l.URL = norm
		l.StampLaunchID() // every URI found from it names its launch (pkg/messages/launchid.go)
		n, err := w.chain.attach(ctx, l)
		if err != nil {
			return fmt.Errorf("attach launch %s: %w", l.URL, err)
		}
		if n > 0 {
			w.metrics.launchesSkipped.WithLabelValues("sheet_dropped").Add(float64(n))
		}
		launches = append(launches, l)
	}
	w.chain.refresh(ctx, true)
	recs, err := w.admit(ctx, launches, true, true)
	if err != nil {
		return err
	}
	recs = append(recs, rejects...)
	if len(recs) > 0 {
		if err := w.producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("publish inscope: %w", err)
		}
	}
	return nil
}

// admit runs the candidate chain (scope, seen filter) and queues what
// passes, in one frontier call shared with concurrent threads. launched
// marks launch messages (not discovered links): their resetQuotas
// annotation resets the quota counters. It returns the inscope journal
// records for the URIs queued, and with rejournal also for those already
// queued: an interrupted earlier attempt (a launch batch whose offsets were
// not committed, a page crawled again after a crash) may have queued them
// without journaling them, and a duplicate in the journal costs nothing.
func (w *Worker) admit(ctx context.Context, ls []messages.Launch, launched, rejournal bool) ([]*kgo.Record, error) {
	return w.admitEach(ctx, ls, launched, rejournal, nil)
}

// admitEach is admit, calling onNew (when set) with each launch the
// frontier queued as new.
func (w *Worker) admitEach(ctx context.Context, ls []messages.Launch, launched, rejournal bool, onNew func(messages.Launch)) ([]*kgo.Record, error) {
	// Grown as needed: most of a page's links are answered by the admitted
	// cache, and a candidate is about 700 bytes to zero.
	var cands []frontier.Candidate
	cacheable := !launched && !rejournal
	for _, l := range ls {
		// A discovered seed is a seed's redirect target (seedredirect.go):
		// it must reach addRedirectSeed even when the link was admitted
		// moments ago as an ordinary one.
		redirectSeed := l.IsSeed && !launched
		if cacheable && !redirectSeed && w.admitted.seen(w.admitted.key(l.URL, l.LaunchTimestamp())) {
			w.metrics.candidates.WithLabelValues("cached").Inc()
			continue
		}
		d, eff, err := w.chain.judge(ctx, l)
		if err != nil || !d.Accepted() {
			w.metrics.candidates.WithLabelValues("rejected").Inc()
			continue
		}
		if redirectSeed {
			if eff, l.ForceFetch, err = w.addRedirectSeed(ctx, l); err != nil {
				return nil, err
			}
		}
		key, err := surt.CDXKey(l.URL)
		if err != nil {
			w.metrics.candidates.WithLabelValues("bad_url").Inc()
			continue
		}
		if l.Timestamp == "" {
			l.Timestamp = time.Now().UTC().Format("2006-01-02T15:04:05.000")
		}
		cands = append(cands, frontier.Candidate{Launch: l, Policy: w.chain.policy(eff), Key: key,
			ResetQuotas: launched && slices.Contains(l.Annotations(), "resetQuotas")})
	}
	if len(cands) == 0 {
		return nil, nil
	}
	if w.prof.Frontier.SeenFilter == profile.SeenRecently {
		w.lastCrawled(ctx, cands)
	}
	res, err := w.batch.Admit(ctx, cands)
	if err != nil {
		return nil, err
	}
	held := w.countAdaptiveSaved(ctx, cands, res)
	if cacheable {
		w.admitted.add(keysOf(w.admitted, cands, res))
	}
	var recs []*kgo.Record
	for i, r := range res {
		// A seed's redirect target already in flight is journalled all
		// the same, so that a rebuild knows it as a seed.
		again := rejournal || cands[i].Launch.IsSeed && !launched
		switch {
		case r.Verdict == frontier.Invalid:
			w.log.Debug("candidate not queued", "url", cands[i].Launch.URL, "err", r.Err)
			w.metrics.candidates.WithLabelValues("bad_url").Inc()
			continue
		case !r.New() && !(again && r.Verdict == frontier.Queued):
			w.metrics.candidates.WithLabelValues(r.Verdict.String()).Inc()
			continue
		}
		w.metrics.candidates.WithLabelValues(r.Verdict.String()).Inc()
		l := cands[i].Launch
		if onNew != nil && r.New() {
			onNew(l)
		}
		b, err := messages.AppendLaunch(nil, l)
		if err != nil {
			return nil, fmt.Errorf("encode inscope %s: %w", l.URL, err)
		}
		key, _ := hostkey.ForURL(l.URL)
		recs = append(recs, &kgo.Record{Topic: w.cfg.InScopeTopic(), Key: []byte(key), Value: b})
	}
	if len(recs) > 0 {
		w.nudge()
	}
	if len(held) > 0 {
		below, err := w.followHeld(ctx, held)
		if err != nil {
			return nil, err
		}
		recs = append(recs, below...)
	}
	return recs, nil
}

// keysOf returns the cache keys of the candidates the frontier answered
// (queued now, already queued or seen); invalid ones are not cached.
func keysOf(c *admitCache, cands []frontier.Candidate, res []frontier.AdmitResult) []uint64 {
	keys := make([]uint64, 0, len(cands))
	for i, r := range res {
		if r.Verdict != frontier.Invalid {
			keys = append(keys, c.key(cands[i].Launch.URL, cands[i].Launch.LaunchTimestamp()))
		}
	}
	return keys
}
