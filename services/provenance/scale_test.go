package provenance

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// TestScaleMemory measures what one launch of N URIs costs the role (issue
// 36, provenance that streams): Redis used_memory for its recorded events
// and the process's peak RSS while its metadata WARC is built. Run it
// alone, with N set:
//
//	TRAWLER_PROVENANCE_URIS=100000 [TRAWLER_PROVENANCE_STREAMING=1] go test -run TestScaleMemory -v -timeout 60m ./services/provenance/
//
// With TRAWLER_PROVENANCE_STREAMING=1 the launch goes the streaming way
// (provenance.streaming): its batches through the role's consumer
// handler, each event with a topic position, spooled and counted by
// offset, and the metadata WARC built by external sort.
//
// It asserts nothing about the figures (docs/provenance.md keeps them).
func TestScaleMemory(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TRAWLER_PROVENANCE_URIS"))
	if n <= 0 {
		t.Skip("set TRAWLER_PROVENANCE_URIS to measure")
	}
	streaming := os.Getenv("TRAWLER_PROVENANCE_STREAMING") == "1"
	h := newHarness(t)
	h.cfg.Settle = 0
	h.front.set(src, 1)
	p := profile.Default()
	p.Crawl.Name = "test-crawl"
	p.Provenance.Streaming = streaming
	s := h.startWith(p, nil)
	ctx := context.Background()
	t0 := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	ts := t0.Format("20060102150405")
	l := harveststats.Launch{Source: src, Timestamp: ts}
	if streaming {
		l.Source = harveststats.CrawlSource
	}
	// The peak RSS of recording: clear the high-water mark first.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	logDir := filepath.Join(h.cfg.DataDir, "logs", "fc-npld")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	lf, err := os.Create(filepath.Join(logDir, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(lf)
	before := usedMemory(t, h)
	began := time.Now()
	const batch = 1000
	evs := make([]messages.Crawled, 0, batch)
	for i := range n {
		ann := ""
		if i == 0 {
			ann = "launchTimestamp:" + ts
		}
		ev := event(fmt.Sprintf("http://h%d.example.org/page/%d", i%5000, i), 200, t0.Add(time.Duration(i)*time.Millisecond), "L", ann)
		ev.Host = fmt.Sprintf("h%d.example.org", i%5000)
		ev.ExtraInfo = map[string]any{messages.ExtraLaunchID: ts}
		evs = append(evs, ev)
		if _, err := w.Write(logLine(t, ev)); err != nil {
			t.Fatal(err)
		}
		if len(evs) == batch || i == n-1 {
			if streaming {
				items := make([]kafka.Item[messages.Crawled], len(evs))
				for j, e := range evs {
					k := i - len(evs) + 1 + j
					items[j] = kafka.Item[messages.Crawled]{Value: e, Record: &kgo.Record{Partition: int32(k % 4), Offset: int64(k / 4)}}
				}
				if err := s.handle(ctx, items); err != nil {
					t.Fatal(err)
				}
			} else if err := s.Store().Record(ctx, evs); err != nil {
				t.Fatal(err)
			}
			evs = evs[:0]
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	_ = lf.Close()
	recorded := usedMemory(t, h)
	t.Logf("streaming %v: %d URIs of one launch (5000 hosts of one domain) recorded in %v: Redis used_memory %d MB more (%d bytes per URI); peak RSS while recording %d MB",
		streaming, n, time.Since(began).Round(time.Millisecond), (recorded-before)>>20, (recorded-before)/int64(n), procStatus(t, "VmHWM")>>10)
	if streaming {
		var spooled int64
		_ = filepath.WalkDir(h.cfg.SpoolDir(), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					spooled += fi.Size()
				}
			}
			return nil
		})
		t.Logf("spool on disk: %d MB (%d bytes per URI)", spooled>>20, spooled/int64(n))
	}
	// The peak RSS of the seal alone: clear the high-water mark first.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	rss0 := procStatus(t, "VmHWM")
	start := time.Now()
	h.front.set(src, 0)
	deadline := time.Now().Add(20 * time.Minute)
	for f, _ := s.Store().Done(ctx, l); f == ""; f, _ = s.Store().Done(ctx, l) {
		if time.Now().After(deadline) {
			t.Fatal("the launch not written within 20 minutes")
		}
		time.Sleep(50 * time.Millisecond) // polling the store with a deadline
	}
	t.Logf("sealed and written in %v; peak RSS %d MB (%d MB before the seal); Redis used_memory after %d MB",
		time.Since(start).Round(time.Millisecond), procStatus(t, "VmHWM")>>10, rss0>>10, usedMemory(t, h)>>20)
}

// usedMemory is Redis's INFO used_memory.
func usedMemory(t *testing.T, h *harness) int64 {
	t.Helper()
	info, err := h.rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no used_memory in INFO")
	return 0
}

// procStatus reads a kB field of /proc/self/status.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
