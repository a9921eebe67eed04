package provenance

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/metawarc"
)

// Launches of one target overlap: launch 1's deep URIs are still crawled
// after launch 2 began. Their events name launch 1 (extra_info launchId),
// so they count in launch 1's statistics and their lines are in its
// metadata WARC's crawl.log record, not launch 2's; launch 1 is sealed
// once its own URIs are quiet although its target still has work.
func TestOverlappingLaunches(t *testing.T) {
	h := newHarness(t)
	t1 := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	const id1, id2 = "20240117090000", "20240117100000"
	named := func(url string, at time.Time, hop, ann, id string) messages.Crawled {
		e := event(url, 200, at, hop, ann)
		e.ExtraInfo = map[string]any{messages.ExtraLaunchID: id}
		return e
	}
	evs := []messages.Crawled{
		named("http://done.example/", t1.Add(time.Second), "", "launchTimestamp:"+id1, id1),
		named("http://done.example/a", t1.Add(2*time.Second), "L", "", id1),
		named("http://done.example/", t2.Add(time.Second), "", "launchTimestamp:"+id2, id2),
		named("http://done.example/a/deep", t2.Add(2*time.Second), "LL", "", id1), // launch 1's, late
		named("http://done.example/x", t2.Add(3*time.Second), "L", "", id2),
	}
	var log, want1, want2 bytes.Buffer
	for _, ev := range evs {
		line := logLine(t, ev)
		log.Write(line)
		if ev.LaunchID() == id1 {
			want1.Write(line)
		} else {
			want2.Write(line)
		}
	}
	logDir := filepath.Join(h.cfg.DataDir, "logs", "fc-npld")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, "crawl.log"), log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	h.front.set(src, 4) // the target keeps work queued throughout
	s := h.start()
	for _, ev := range evs {
		h.produce(marshal(t, ev))
	}
	ctx := context.Background()
	l1, l2 := harveststats.Launch{Source: src, Timestamp: id1}, harveststats.Launch{Source: src, Timestamp: id2}
	var f1 string
	eventually(t, "launch 1 sealed and written", func() bool {
		f1, _ = s.Store().Done(ctx, l1)
		return f1 != ""
	})
	st1, err := s.Store().Stats(ctx, l1)
	if err != nil || st1.Totals.URIs != 3 || st1.State != harveststats.StateCompleted {
		t.Errorf("launch 1: %+v, %v", st1, err)
	}
	logURI := func(id string) string { return metawarc.URI(metawarc.PathCrawlLog, "fc", src, id) }
	if got := readStrict(t, filepath.Join(h.cfg.warcDir(), f1))[logURI(id1)]; !bytes.Equal(got, want1.Bytes()) {
		t.Errorf("launch 1 crawl.log record:\n%s\nwant:\n%s", got, want1.Bytes())
	}
	if f, _ := s.Store().Done(ctx, l2); f != "" {
		t.Fatal("launch 2 sealed while its target has work and no later launch")
	}
	endCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.EndCrawl(endCtx, harveststats.StateRunning); err != nil {
		t.Fatal(err)
	}
	f2, _ := s.Store().Done(ctx, l2)
	if f2 == "" {
		t.Fatal("launch 2 not written at crawl end")
	}
	if got := readStrict(t, filepath.Join(h.cfg.warcDir(), f2))[logURI(id2)]; !bytes.Equal(got, want2.Bytes()) {
		t.Errorf("launch 2 crawl.log record:\n%s\nwant:\n%s", got, want2.Bytes())
	}
	if st2, err := s.Store().Stats(ctx, l2); err != nil || st2.Totals.URIs != 2 {
		t.Errorf("launch 2: %+v, %v", st2, err)
	}
}
