package worker

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// A capture's crawl.log line is written just after its WARC records (and
// before its event is published), so a worker killed in between leaves a
// capture without a line. Such captures are in the WARC files the crash
// left open, or in a file the crash's last writes filled and closed; on the
// next start recoverCrawlLog writes their lines from the WARC records.

// annotationRecovered marks a crawl.log line written at restart from the
// WARC records, so readers know its thread and log time are not the
// fetch's own.
const annotationRecovered = "recoveredFromWarc"

// recoverWindow is how long before a crash a closed WARC file may still
// hold a capture whose line was not yet written: the time from a WARC
// write to its line (outlink admission, event encoding) is far shorter.
const recoverWindow = time.Minute

// maxHTTPHeadBytes bounds the response head scanned for its end, as the
// fetcher bounds it.
const maxHTTPHeadBytes = 1 << 20

// recoveredCapture is what the WARC records of one capture say about it.
type recoveredCapture struct {
	url       string
	date      time.Time
	status    int
	mime      string
	http      bool
	size      int64 // the record block (bytes recorded)
	bodySize  int64 // HTTP message body as received
	digest    string
	notes     []string
	via, hops string
	source    string
	fetchTime time.Duration
}

// recoverCrawlLog writes the crawl.log lines missing for the captures of
// the WARC files a crash left open (recovered) and of closed files written
// just before the crash. Each capture needs one line with its URL and
// fetch start; lines already there are matched by count, so a URI captured
// twice (its event lost, then crawled again) gets two. Failures are
// logged: the crawl goes on without the missing lines.
func (w *Worker) recoverCrawlLog(recovered []warcwriter.ClosedFile) {
	w.recoverCrawlLogOf(w.cfg.ID, w.clog, recovered)
}

// recoverCrawlLogOf is recoverCrawlLog for identity id, whose crawl.log
// clog is: the worker's own, or a dead identity's the janitor recovers.
// Only files of that identity are read, since siblings sharing the
// directory log their captures in crawl.logs of their own.
func (w *Worker) recoverCrawlLogOf(id string, clog *crawllog.Writer, recovered []warcwriter.ClosedFile) {
	if len(recovered) == 0 || clog == nil {
		return
	}
	files := recoveryCandidates(recovered)
	if w.cfg.leased() {
		files = slices.DeleteFunc(files, func(p string) bool {
			h, ok := warcwriter.HostFromName(filepath.Base(p))
			return !ok || h != id
		})
	}
	var caps []recoveredCapture
	for _, path := range files {
		c, err := readCaptures(path)
		if err != nil {
			w.log.Error("read WARC for missing crawl.log lines", "file", path, "err", err)
		}
		caps = append(caps, c...)
	}
	if len(caps) == 0 {
		return
	}
	want := map[string]int{}
	oldest := caps[0].date
	for _, c := range caps {
		want[crawllog.CaptureKey(c.url, c.date)]++
		oldest = minTime(oldest, c.date)
	}
	have, err := countLoggedCaptures(w.cfg.logDirOf(id), want, oldest.Add(-recoverWindow))
	if err != nil {
		w.log.Error("read crawl.log for missing lines; none written", "err", err)
		return
	}
	written := 0
	for _, c := range caps {
		key := crawllog.CaptureKey(c.url, c.date)
		if have[key] > 0 {
			have[key]--
			continue
		}
		if err := clog.Write(c.entry()); err != nil {
			w.log.Error("write recovered crawl.log line", "url", c.url, "err", err)
			return
		}
		written++
	}
	if written > 0 {
		w.log.Warn("wrote crawl.log lines missing after a crash, from the WARC records", "identity", id, "lines", written,
			"captures", len(caps), "files", len(files))
	}
}

// recoveryCandidates lists the recovered files and, in their directories,
// the closed files last written within recoverWindow of the crash (the
// newest modification among the recovered files).
func recoveryCandidates(recovered []warcwriter.ClosedFile) []string {
	var crash time.Time
	seen := map[string]bool{}
	dirs := map[string]bool{}
	var out []string
	for _, f := range recovered {
		crash = maxTime(crash, f.Closed)
		seen[f.Path] = true
		dirs[filepath.Dir(f.Path)] = true
		out = append(out, f.Path)
	}
	for dir := range dirs {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
		for _, p := range paths {
			if fi, err := os.Stat(p); err == nil && !seen[p] && !fi.ModTime().Before(crash.Add(-recoverWindow)) {
				out = append(out, p)
			}
		}
	}
	return out
}

// countLoggedCaptures counts the lines of the crawl.log files in dir
// (current and rotated, last written at or after since) whose capture key
// is in want.
func countLoggedCaptures(dir string, want map[string]int, since time.Time) (map[string]int, error) {
	paths, err := filepath.Glob(filepath.Join(dir, crawllog.DefaultName+"*"))
	if err != nil {
		return nil, fmt.Errorf("list crawl logs in %s: %w", dir, err)
	}
	have := map[string]int{}
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.ModTime().Before(since) {
			continue
		}
		if err := scanLog(p, want, have); err != nil {
			return nil, err
		}
	}
	return have, nil
}

func scanLog(path string, want, have map[string]int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read crawl log: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: skip the rest of it.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			continue
		}
		if key, ok := crawllog.LineKey(line); ok && want[key] > 0 {
			have[key]++
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read crawl log %s: %w", path, err)
		}
	}
}

// readCaptures lists the captures (response, revisit and resource records,
// dns: included) of a WARC file with what their metadata records add.
func readCaptures(path string) ([]recoveredCapture, error) {
	// Through warcwriter, which serialises gowarc's option building: this
	// runs beside the worker's own WARC writers (the janitor).
	r, err := warcwriter.OpenReader(path, 0, gowarc.WithSyntaxErrorPolicy(gowarc.ErrIgnore),
		gowarc.WithSpecViolationPolicy(gowarc.ErrIgnore), gowarc.WithUnknownRecordTypePolicy(gowarc.ErrIgnore))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var caps []recoveredCapture
	byID := map[string]int{}
	for {
		rec, _, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			return caps, nil
		}
		if err != nil {
			return caps, fmt.Errorf("read warc %s: %w", path, err)
		}
		h := rec.WarcHeader()
		switch rec.Type() {
		case gowarc.Response, gowarc.Revisit, gowarc.Resource:
			c, err := captureOf(rec)
			if err == nil {
				byID[h.Get(gowarc.WarcRecordID)] = len(caps)
				caps = append(caps, c)
			}
		case gowarc.Metadata:
			if i, ok := byID[h.Get(gowarc.WarcConcurrentTo)]; ok {
				applyMetadata(&caps[i], rec)
			}
		}
		_ = rec.Close()
	}
}

// captureOf reads one capture record.
func captureOf(rec gowarc.WarcRecord) (recoveredCapture, error) {
	h := rec.WarcHeader()
	date, err := time.Parse(time.RFC3339Nano, h.Get(gowarc.WarcDate))
	if err != nil {
		return recoveredCapture{}, fmt.Errorf("WARC-Date: %w", err)
	}
	size, _ := strconv.ParseInt(h.Get(gowarc.ContentLength), 10, 64)
	c := recoveredCapture{url: strings.Trim(h.Get(gowarc.WarcTargetURI), "<>"), date: date, size: size,
		digest: h.Get(gowarc.WarcPayloadDigest)}
	ct := h.Get(gowarc.ContentType)
	if !strings.HasPrefix(ct, "application/http") {
		// dns: and other resources: the block is what was recorded.
		c.status, c.mime = statusDNSOK, crawllog.TruncateMIME(ct)
		if c.digest == "" {
			c.digest = h.Get(gowarc.WarcBlockDigest)
		}
		return c, nil
	}
	raw, err := rec.Block().RawBytes()
	if err != nil {
		return recoveredCapture{}, fmt.Errorf("record block: %w", err)
	}
	head, header, status, err := readHTTPHead(bufio.NewReader(raw))
	if err != nil {
		return recoveredCapture{}, err
	}
	c.http, c.status, c.mime, c.bodySize = true, status, fetch.MediaType(header.Get("Content-Type")), size-head
	if rec.Type() == gowarc.Revisit {
		// A revisit keeps only the head: the body it stands for is the
		// size the server declared, if it did.
		c.bodySize, _ = strconv.ParseInt(header.Get("Content-Length"), 10, 64)
		switch prof := h.Get(gowarc.WarcProfile); {
		case strings.Contains(prof, "identical-payload-digest"):
			c.notes = append(c.notes, annotationDuplicate)
		case strings.Contains(prof, "server-not-modified"):
			c.notes = append(c.notes, annotationNotModified)
		}
	}
	switch h.Get(gowarc.WarcTruncated) {
	case "length":
		c.notes = append(c.notes, "lenTrunc")
	case "time":
		c.notes = append(c.notes, "timeTrunc")
	}
	if slices.Contains(h.GetAll("WARC-Protocol"), fetch.ProtocolH2) {
		c.notes = append(c.notes, fetch.AnnotationH2)
	}
	return c, nil
}

// applyMetadata takes via, hopsFromSeed, sourceTag and fetchTimeMs from a
// capture's metadata record.
func applyMetadata(c *recoveredCapture, rec gowarc.WarcRecord) {
	raw, err := rec.Block().RawBytes()
	if err != nil {
		return
	}
	sc := bufio.NewScanner(raw)
	sc.Buffer(make([]byte, 0, 64<<10), maxHTTPHeadBytes)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		switch name {
		case "via":
			c.via = value
		case "hopsFromSeed":
			c.hops = value
		case "sourceTag":
			c.source = value
		case "fetchTimeMs":
			if ms, err := strconv.ParseInt(value, 10, 64); err == nil {
				c.fetchTime = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// entry is the crawl.log line of c.
func (c *recoveredCapture) entry() crawllog.Entry {
	via := c.via
	if via == c.url {
		via = "" // a seed is recorded as its own via
	}
	size := c.size
	if c.http {
		size = c.bodySize
	}
	return crawllog.Entry{
		Logged: time.Now(), Status: c.status, Size: size, HTTP: c.http, URL: c.url, HopPath: c.hops, Via: via,
		MIME: c.mime, FetchStart: c.date, Duration: c.fetchTime, Digest: c.digest, Source: c.source,
		Annotations: append(c.notes, annotationRecovered),
	}
}

// messageBodySize is an HTTP response's message body as received (chunk
// framing included), Heritrix's content length: the raw response less the
// head of the final response (interim 1xx responses are head too).
func messageBodySize(resp *fetch.Response) int64 {
	head, _, _, err := readHTTPHead(bufio.NewReader(resp.Raw.NewReader()))
	if err != nil {
		return resp.Payload.Size()
	}
	return resp.Raw.Size() - head
}

// readHTTPHead reads the status lines and headers of an HTTP response up
// to the start of the final response's body, skipping interim 1xx
// responses (but not 101, after which the connection is no longer HTTP).
// It returns how many bytes that head is, the final header and status.
func readHTTPHead(r *bufio.Reader) (int64, headerFields, int, error) {
	var n int64
	for {
		status, header, size, err := readHeadBlock(r)
		n += size
		if err != nil {
			return 0, nil, 0, err
		}
		if status >= 200 || status < 100 || status == 101 {
			return n, header, status, nil
		}
		if n > maxHTTPHeadBytes {
			return 0, nil, 0, errors.New("http head too long")
		}
	}
}

// headerFields is a response header, names lower-cased.
type headerFields map[string]string

// Get returns the first value of the named field.
func (h headerFields) Get(name string) string { return h[strings.ToLower(name)] }

// readHeadBlock reads one status line and its header fields to the empty
// line that ends them (CRLF or bare LF, as the fetcher accepts).
func readHeadBlock(r *bufio.Reader) (status int, h headerFields, size int64, err error) {
	h = headerFields{}
	for first := true; ; first = false {
		line, err := r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) { // a very long header line
			size += int64(len(line))
			if size > maxHTTPHeadBytes {
				return 0, nil, 0, errors.New("http head too long")
			}
			line, err = r.ReadSlice('\n')
		}
		size += int64(len(line))
		if err != nil {
			return 0, nil, 0, fmt.Errorf("http head: %w", err)
		}
		text := bytes.TrimRight(line, "\r\n")
		switch {
		case first:
			fields := strings.Fields(string(text))
			if len(fields) < 2 || !strings.HasPrefix(fields[0], "HTTP/") {
				return 0, nil, 0, fmt.Errorf("http status line %q", text)
			}
			if status, err = strconv.Atoi(fields[1]); err != nil {
				return 0, nil, 0, fmt.Errorf("http status line %q", text)
			}
		case len(text) == 0:
			return status, h, size, nil
		default:
			if name, value, ok := strings.Cut(string(text), ":"); ok {
				key := strings.ToLower(strings.TrimSpace(name))
				if _, dup := h[key]; !dup {
					h[key] = strings.TrimSpace(value)
				}
			}
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
