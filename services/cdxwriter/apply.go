package cdxwriter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// handle applies one batch: index lines and recently-crawled updates are
// written in parallel, and both must succeed before the consumer commits.
// An error makes the consumer retry the whole batch, which is safe because
// both writes are idempotent.
func (w *Writer) handle(ctx context.Context, batch []kafka.Item[event]) error {
	start := time.Now()
	lines := make([]cdx.Line, 0, len(batch))
	owners := make([]*kgo.Record, 0, len(batch)) // owners[i] sent lines[i]
	updates := map[*recentdb.DB][]recentdb.Update{}
	for _, it := range batch {
		if it.Value.line != nil {
			lines = append(lines, *it.Value.line)
			owners = append(owners, it.Record)
		}
		if it.Value.update != nil {
			db := w.history(it.Value.stream)
			updates[db] = append(updates[db], *it.Value.update)
		}
	}
	idxErr := make(chan error, 1)
	go func() { idxErr <- w.putIndex(ctx, lines, owners) }()
	recErr := w.putRecent(ctx, updates)
	if err := errors.Join(<-idxErr, recErr); err != nil {
		return err
	}
	w.m.applySecs.WithLabelValues("batch").Observe(time.Since(start).Seconds())
	for _, it := range batch {
		w.m.events.WithLabelValues(it.Value.result).Inc()
	}
	return nil
}

// history is the recently-crawled DB of a stream; an event of a crawl
// without streams, or one naming none, goes to the default.
func (w *Writer) history(stream string) *recentdb.DB {
	if db, ok := w.histories[stream]; ok {
		return db
	}
	return w.recent
}

// putRecent writes the recently-crawled updates, each to its stream's DB.
func (w *Writer) putRecent(ctx context.Context, updates map[*recentdb.DB][]recentdb.Update) error {
	if len(updates) == 0 {
		return nil
	}
	start := time.Now()
	for db, us := range updates {
		if err := db.Put(ctx, us); err != nil {
			return err
		}
	}
	w.m.applySecs.WithLabelValues("recent").Observe(time.Since(start).Seconds())
	return nil
}

// putIndex writes the lines in one call. If the index rejects the batch for
// a bad line, the lines are retried one by one so the good ones are indexed
// and only the bad ones' events go to the dead-letter topic, instead of the
// whole batch failing for ever.
func (w *Writer) putIndex(ctx context.Context, lines []cdx.Line, owners []*kgo.Record) error {
	if len(lines) == 0 {
		return nil
	}
	start := time.Now()
	err := w.index.Put(ctx, w.cfg.Collection(), lines)
	if errors.Is(err, cdxindex.ErrBadLine) {
		w.m.isolations.Inc()
		err = w.isolateBadLines(ctx, lines, owners)
	}
	if err != nil {
		return fmt.Errorf("cdxwriter: index %d lines: %w", len(lines), err)
	}
	w.m.indexLines.Add(float64(len(lines)))
	w.m.applySecs.WithLabelValues("index").Observe(time.Since(start).Seconds())
	return nil
}

// isolateBadLines finds the lines the index rejects by halving the batch
// (a few Puts per bad line rather than one per line), indexes the rest and
// dead-letters the events of the rejected ones.
func (w *Writer) isolateBadLines(ctx context.Context, lines []cdx.Line, owners []*kgo.Record) error {
	var poison []*kgo.Record
	var bisect func(lo, hi int) error
	bisect = func(lo, hi int) error {
		err := w.index.Put(ctx, w.cfg.Collection(), lines[lo:hi])
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, cdxindex.ErrBadLine):
			return err
		case hi-lo == 1:
			r := owners[lo]
			poison = append(poison, kafka.DLQRecord(w.cfg.DLQTopic(), w.cfg.Group(), r, err))
			w.log.Warn("index rejected an event's line; sent to the dead-letter topic",
				"position", fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset), "err", err)
			return nil
		}
		mid := (lo + hi) / 2
		return errors.Join(bisect(lo, mid), bisect(mid, hi))
	}
	if err := bisect(0, len(lines)); err != nil {
		return err
	}
	if len(poison) == 0 {
		return nil
	}
	if err := w.dlq.ProduceSync(ctx, poison...).FirstErr(); err != nil {
		return fmt.Errorf("dead-letter %d rejected lines: %w", len(poison), err)
	}
	w.m.lineRejects.Add(float64(len(poison)))
	return nil
}

// handleForward forwards a batch's lines (and, if configured, its failure
// lines) to the external OutbackCDX; the forwarding group commits only
// after it has accepted them all.
func (w *Writer) handleForward(ctx context.Context, batch []kafka.Item[event]) error {
	start := time.Now()
	lines := make([]cdx.Line, 0, len(batch))
	for _, it := range batch {
		switch {
		case it.Value.line != nil:
			lines = append(lines, *it.Value.line)
		case it.Value.failLine != nil && w.cfg.ForwardFailures:
			lines = append(lines, *it.Value.failLine)
		}
	}
	if err := w.fw.Forward(ctx, lines); err != nil {
		return err
	}
	w.m.forwarded.Add(float64(len(lines)))
	w.m.applySecs.WithLabelValues("forward").Observe(time.Since(start).Seconds())
	return nil
}
