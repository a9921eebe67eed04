package provenance

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/metawarc"
	"github.com/trawler-crawl/trawler/pkg/qa"
)

// A QA report written into the launch's report directory before the
// launch is sealed goes into its metadata WARC as
// crawl/reports/qa-report.json, byte for byte; a launch sealed without
// one has no such record.
func TestQAReportGoesIntoTheMetadataWARC(t *testing.T) {
	if QAReport != qa.ReportJSON {
		t.Fatalf("provenance reads %s, trawler qa writes %s", QAReport, qa.ReportJSON)
	}
	h := newHarness(t)
	t1 := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	evs := []string{"20240117090000", "20240117100000"}
	h.front.set(src, 1)
	s := h.start()
	ctx := context.Background()
	report := []byte(`{"pages": 1, "mean_score": 0.667, "results": [{"url": "http://done.example/"}]}` + "\n")
	for i, ts := range evs {
		at := t1.Add(time.Duration(i) * time.Hour)
		h.produce(marshal(t, event("http://done.example/", 200, at.Add(time.Second), "", "launchTimestamp:"+ts)))
		l := harveststats.Launch{Source: src, Timestamp: ts}
		eventually(t, "launch counted", func() bool {
			st, err := s.Store().Stats(ctx, l)
			return err == nil && st.Totals.URIs == 1
		})
		if i == 0 {
			// QA ran while the launch was open.
			if err := os.MkdirAll(h.cfg.LaunchDir(l), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(h.cfg.LaunchDir(l), QAReport), report, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		h.front.set(src, 0)
		var file string
		eventually(t, "launch sealed and written", func() bool {
			file, _ = s.Store().Done(ctx, l)
			return file != ""
		})
		blocks := readStrict(t, filepath.Join(h.cfg.warcDir(), file))
		got, ok := blocks[metawarc.URI(metawarc.PathReports+QAReport, "fc", src, ts)]
		switch {
		case i == 0 && !bytes.Equal(got, report):
			t.Errorf("launch %s: QA report record %q (present %v), want the report byte for byte", ts, got, ok)
		case i == 1 && ok:
			t.Errorf("launch %s: a QA report record, but QA never ran for it", ts)
		}
		h.front.set(src, 1)
	}
}
