package worker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// A crawl.log left from an earlier day is rotated when the worker opens
// its outputs, and the rotated file is announced on fc.warcs as a crawl
// log: a valid closed-file notice with kind crawl_log, its line count,
// and the day it holds.
func TestRotatedCrawlLogIsAnnounced(t *testing.T) {
	e := setup(t)
	w := newWorker(t, e, t.TempDir())
	logDir := w.cfg.logDirOf(w.cfg.ID)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(logDir, "crawl.log")
	if err := os.WriteFile(old, []byte("line 1\nline 2\nline 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	day := time.Now().UTC().AddDate(0, 0, -2)
	if err := os.Chtimes(old, day, day); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker run: %v", err)
		}
	})

	n, raw := awaitCrawlLogNotice(t, e)
	midnight := time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, time.UTC)
	wantName := "crawl.log." + midnight.Format("20060102150405")
	if n.Filename != wantName || n.Path != filepath.Join(logDir, wantName) {
		t.Errorf("notice names %s at %s, want %s in %s", n.Filename, n.Path, wantName, logDir)
	}
	if n.Size != 21 || n.Records != 3 || n.Host != "w1" {
		t.Errorf("notice size %d, records %d, host %q; want 21, 3, w1", n.Size, n.Records, n.Host)
	}
	if want := messages.FormatTimestamp(midnight); n.Closed != want {
		t.Errorf("closed %s, want %s", n.Closed, want)
	}
	if n.Kind != messages.NoticeKindCrawlLog {
		t.Errorf("notice %s: kind %q, want %q", raw, n.Kind, messages.NoticeKindCrawlLog)
	}
	if _, err := os.Stat(n.Path); err != nil {
		t.Errorf("announced file: %v", err)
	}
}

// awaitCrawlLogNotice reads fc.warcs until a crawl-log notice arrives,
// polling with a deadline.
func awaitCrawlLogNotice(t *testing.T, e *env) (messages.WarcNotice, []byte) {
	t.Helper()
	cl, err := kafka.NewClient(e.kc, kgo.ConsumeTopics("fc.warcs"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		var found *kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			var k struct{ Kind string }
			if json.Unmarshal(r.Value, &k) == nil && k.Kind == messages.NoticeKindCrawlLog {
				found = r
			}
		})
		if found != nil {
			// Decoded as a strict consumer does: unknown fields are errors.
			n, err := messages.DecodeWarcNotice(found.Value)
			if err != nil {
				t.Fatalf("notice %s: %v", found.Value, err)
			}
			if string(found.Key) != n.Filename {
				t.Errorf("record key %q, want the file name %q", found.Key, n.Filename)
			}
			return n, found.Value
		}
	}
	t.Fatal("no crawl-log notice on fc.warcs within 30s")
	return messages.WarcNotice{}, nil
}
