package cdxwriter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/kafka"
)

// fakeIndex stands in for pkg/cdxindex in the tests of the batching logic
// only: it rejects lines whose URL contains "reject" the way the real index
// rejects a bad line (the whole call fails with ErrBadLine), and fails the
// first transient calls with another error.
type fakeIndex struct {
	mu        sync.Mutex
	transient int
	calls     int
	lines     map[string]bool
}

func (f *fakeIndex) Put(_ context.Context, collection string, lines []cdx.Line) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.transient > 0 {
		f.transient--
		return errors.New("disk hiccup")
	}
	for i, l := range lines {
		if strings.Contains(l.Original, "reject") {
			return fmt.Errorf("%w: line %d of %d: urlkey contains a NUL byte", cdxindex.ErrBadLine, i+1, len(lines))
		}
	}
	for _, l := range lines {
		f.lines[collection+" "+l.CDX11()] = true
	}
	return nil
}

func (f *fakeIndex) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.lines)
}

// A batch the index rejects for a few bad lines is split until the bad
// lines are found: those events go to the DLQ, the rest are indexed, and a
// transient index error just retries the batch.
func TestBadLinesAreIsolated(t *testing.T) {
	h := newHarness(t, 1)
	fake := &fakeIndex{transient: 2, lines: map[string]bool{}}
	h.deps.Index = fake
	h.cfg.CDXAddr = ""
	var values []string
	for i := range 40 {
		u := fmt.Sprintf("http://site.example/%d", i)
		if i == 7 || i == 30 {
			u = fmt.Sprintf("http://site.example/reject/%d", i)
		}
		values = append(values, eventJSON(u, 200, "20240301000000000", "sha1:AAAA", "a.warc.gz", int64(i*100)))
	}
	h.produce(t, values...)
	r := h.start(t)
	h.waitCommitted(t, h.cfg.Group())
	if n := fake.count(); n != 38 {
		t.Errorf("%d lines indexed, want the 38 good ones", n)
	}
	recs := h.dlqRecords(t, 2)
	for _, rec := range recs {
		if !strings.Contains(string(rec.Value), "/reject/") || !strings.Contains(headers(rec)[kafka.DLQHeaderError], "bad cdx line") {
			t.Errorf("DLQ record %s %v", rec.Value, headers(rec))
		}
	}
	// Recently-crawled updates are independent of the index's verdict.
	es := h.lookup(t, "http://site.example/reject/7", "http://site.example/8")
	if es[0].Capture == nil || es[1].Capture == nil {
		t.Errorf("recently crawled %+v", es)
	}
	r.stop(t)
	if got := metricValue(t, h, "trawler_cdxwriter_index_rejected_total"); got != 2 {
		t.Errorf("rejected metric %v", got)
	}
	if got := metricValue(t, h, "trawler_cdxwriter_events_total"); got != 40 {
		t.Errorf("events metric %v, want 40", got)
	}
	if got := metricValue(t, h, "trawler_kafka_consumer_handle_errors_total"); got < 2 {
		t.Errorf("handle errors %v: the transient failures did not retry the batch", got)
	}
}
