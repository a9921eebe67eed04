package worker

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Rotated crawl logs are announced on <crawl>.warcs as closed-file
// notices of kind messages.NoticeKindCrawlLog (records counts the log's
// lines). Archives keep crawl logs with the WARCs as provenance (UKWA
// ships them together), so movers that ship what <crawl>.warcs announces
// ship the logs too.
//
// Only rotated files are announced: a crawl.log closed at shutdown is not
// complete, since the next run appends to it; it is announced when it is
// rotated, at midnight or by the Open of a later day's run.

// crawlLogRotated is the crawl log's OnRotate: it runs on the log's own
// goroutine, so the produce holds up no crawl.log line.
func (w *Worker) crawlLogRotated(r crawllog.Rotated) { w.announceCrawlLog(r, w.cfg.ID) }

// announceCrawlLog publishes the notice of the rotated crawl log r,
// written by identity host, as announceWARC does for a WARC.
func (w *Worker) announceCrawlLog(r crawllog.Rotated, host string) {
	name := filepath.Base(r.Path)
	lines, err := countLines(r.Path)
	if err != nil {
		// The file is announced anyway: a mover that cannot read it
		// will say so, and a missing notice would lose it silently.
		w.log.Warn("count crawl log lines", "file", name, "err", err)
	}
	n := messages.WarcNotice{
		Filename: name, Path: r.Path, Size: r.Size, Records: lines, CrawlName: w.prof.Crawl.Name, Host: host,
		// A rotated file holds the UTC day that ended at its rotation.
		Opened: messages.FormatTimestamp(r.At.Add(-24 * time.Hour)), Closed: messages.FormatTimestamp(r.At),
		Kind: messages.NoticeKindCrawlLog,
	}
	if err := n.Validate(); err != nil {
		w.log.Error("crawl log notice", "file", name, "err", err)
		return
	}
	b, err := jsonMarshal(n)
	if err != nil {
		w.log.Error("encode crawl log notice", "file", name, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.producer.ProduceSync(ctx, &kgo.Record{Topic: w.cfg.Crawl + ".warcs", Key: []byte(name), Value: b}).FirstErr(); err != nil {
		w.log.Error("publish crawl log notice", "file", name, "err", err)
		return
	}
	w.log.Info("announced rotated crawl log", "file", name, "lines", lines)
}

// countLines counts the newline-terminated lines of a file.
func countLines(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	var n int64
	buf := make([]byte, 64<<10)
	r := bufio.NewReaderSize(f, len(buf))
	for {
		k, err := r.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("read %s: %w", path, err)
		}
	}
}
