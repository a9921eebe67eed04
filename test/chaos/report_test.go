//go:build chaos

package chaos_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/services/cdxwriter"
)

// loc is where a record starts: the WARC file's name and the offset of
// its gzip member, as events and CDX lines name it.
type loc struct {
	file   string
	offset int64
}

// report holds the run's figures; docs/chaos.md defines each.
type report struct {
	admitted, finished, neverFinished int
	reachable, unreached              int
	notAdmittedFinished               int // finished URLs never journalled as admitted (prerequisites, dns:)
	events, eventURLs, dupEvents      int
	captures, capturedURLs            int
	capturedTwice, robotsTwice        int
	bound                             int64
	warcFiles, warcRecords            int
	warcInvalid, openFiles            int
	capturesNoEvent                   int
	cdxLines, cdxMissing, cdxOrphans  int
	logLines, logMissing              int
	dlq                               map[string]int
	unasked, failedStarts, idleFaults []string
	evidence                          map[string]int
	examples                          map[string][]string // a few URLs per non-zero figure
}

func (r *report) example(figure, s string) {
	if len(r.examples[figure]) < 10 {
		r.examples[figure] = append(r.examples[figure], s)
	}
}

// waitIndexed waits until the cdxwriter has committed every crawled event
// (its group's lag is 0), so the index can be compared with the WARCs.
func (c *cluster) waitIndexed() {
	cl, err := kafka.NewClient(c.broker.config("chaos-lag"))
	if err != nil {
		c.t.Fatalf("lag client: %v", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	group := cdxwriter.Config{Crawl: "fc"}.Group()
	c.poll("the cdxwriter to index every event", 5*time.Minute, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		lags, err := adm.Lag(ctx, group)
		if err != nil {
			return false
		}
		l, ok := lags[group]
		if !ok || l.Error() != nil || len(l.Lag) == 0 {
			return false
		}
		return l.Lag.Total() == 0
	})
}

// report computes every figure from what the run left: the Kafka topics,
// the WARC files and crawl.logs of the workers, the cdxwriter's index.
func (c *cluster) report(seeds, reachable []string, bound int64) *report {
	t := c.t
	r := &report{bound: bound, dlq: map[string]int{}, examples: map[string][]string{}, evidence: map[string]int{}}
	kc := c.broker.config("chaos-report")

	admitted := map[string]bool{}
	for _, rec := range readTopic(c, kc, "fc.inscope.npld") {
		l, err := messages.DecodeLaunch(rec.Value)
		if err != nil {
			t.Fatalf("inscope record at %d/%d: %v", rec.Partition, rec.Offset, err)
		}
		admitted[l.URL] = true
	}
	events := map[string]int{}     // URL -> events
	eventKeys := map[string]bool{} // URL + fetch start: one per attempt that ended
	eventLocs := map[loc]string{}  // WARC location -> URL, of events naming one
	// lineLocs are where the index lines of those events point: the
	// record's location, or for a 304 its original's (docs/architecture.md
	// 11.2).
	lineLocs := map[loc]string{}
	for _, rec := range readTopic(c, kc, "fc.crawled") {
		ev, err := messages.DecodeCrawled(rec.Value)
		if err != nil {
			t.Fatalf("crawled record at %d/%d: %v", rec.Partition, rec.Offset, err)
		}
		r.events++
		events[ev.URL]++
		eventKeys[fmt.Sprintf("%d %s %s", ev.StatusCode, ev.URL, ev.StartTimePlusDuration)] = true
		if ev.WarcFilename != nil && *ev.WarcFilename != "" && ev.WarcOffset != nil && !strings.HasPrefix(ev.URL, "dns:") {
			eventLocs[loc{*ev.WarcFilename, *ev.WarcOffset}] = ev.URL
			line := loc{*ev.WarcFilename, *ev.WarcOffset}
			if o, ok, err := cdx.OriginalOf(ev); err == nil && ok && ev.StatusCode == 304 {
				line = loc{o.Filename, o.Offset}
			}
			lineLocs[line] = ev.URL
		}
	}
	r.admitted, r.eventURLs = len(admitted), len(events)
	for u := range admitted {
		if events[u] > 0 {
			r.finished++
		} else {
			r.neverFinished++
			r.example("never finished", u)
		}
	}
	// The site model's reachable set is what a crawl with no faults
	// finishes: a URL of it with no event was lost before it was even
	// journalled (a page's outlinks dropped), which "admitted" cannot see.
	for _, u := range reachable {
		if events[u] == 0 {
			r.unreached++
			r.example("reachable URLs never finished", u)
		}
	}
	r.reachable = len(reachable)
	for u, n := range events {
		if n > 1 {
			r.dupEvents++
			r.example("duplicate events", fmt.Sprintf("%s ×%d", u, n))
		}
		if !admitted[u] {
			r.notAdmittedFinished++
		}
	}

	captures := c.scanWARCs(r)
	perURL := map[string]int{}
	for l, u := range captures {
		perURL[u]++
		if _, ok := eventLocs[l]; !ok {
			r.capturesNoEvent++
			r.example("captures without event", fmt.Sprintf("%s %s@%d", u, l.file, l.offset))
		}
	}
	r.captures, r.capturedURLs = len(captures), len(perURL)
	for u, n := range perURL {
		if n < 2 {
			continue
		}
		// robots.txt is a prerequisite kept in a Redis cache: losing Redis
		// (the wipe) fetches it again by design.
		if strings.HasSuffix(u, "/robots.txt") {
			r.robotsTwice++
			continue
		}
		r.capturedTwice++
		r.example("captured more than once", fmt.Sprintf("%s ×%d", u, n))
	}

	// Every authority a capture or a seed names is asked for, so a line
	// of a host with no capture would show up too.
	auths := map[string]bool{}
	for _, s := range seeds {
		auths[authority(s)] = true
	}
	for _, u := range captures {
		auths[authority(u)] = true
	}
	cdxLocs := c.queryCDX(auths)
	r.cdxLines = len(cdxLocs)
	for l, u := range lineLocs {
		if _, ok := cdxLocs[l]; !ok {
			r.cdxMissing++
			r.example("CDX lines missing", fmt.Sprintf("%s %s@%d", u, l.file, l.offset))
		}
	}
	for l, u := range cdxLocs {
		if cu, ok := captures[l]; !ok || cu != u {
			r.cdxOrphans++
			r.example("CDX lines without capture", fmt.Sprintf("%s %s@%d", u, l.file, l.offset))
		}
	}

	// An event and its line share status and URL; the line's time can be
	// a millisecond off the event's, and a URI that was never fetched has
	// no fetch start in the line ("-"), so lines are matched by count:
	// each (status, URL) needs as many lines as it has distinct events.
	need := map[string]int{}
	for k := range eventKeys {
		need[k[:strings.LastIndexByte(k, ' ')]]++
	}
	lines := c.crawlLogCounts(r)
	for k, n := range need {
		if lines[k] < n {
			r.logMissing += n - lines[k]
			r.example("crawl.log lines missing", fmt.Sprintf("%s: %d events, %d lines", k, n, lines[k]))
		}
	}

	for _, rec := range readTopic(c, kc, "fc.dlq") {
		why := ""
		for _, h := range rec.Headers {
			if h.Key == kafka.DLQHeaderError {
				why = string(h.Value)
			}
		}
		src := ""
		for _, h := range rec.Headers {
			if h.Key == kafka.DLQHeaderTopic {
				src = string(h.Value)
			}
		}
		if len(why) > 120 {
			why = why[:120]
		}
		r.dlq[src+": "+why]++
	}
	return r
}

// readTopic returns every record in topic, up to the end offsets seen
// when it starts.
func readTopic(c *cluster, kc kafka.Config, topic string) []*kgo.Record {
	t := c.t
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, err := kafka.NewClient(kc, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatalf("read %s: %v", topic, err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	var out []*kgo.Record
	for int64(len(out)) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: got %d of %d records", topic, len(out), want)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// workerFiles lists the files of every worker whose name passes keep.
func (c *cluster) workerFiles(keep func(name string) bool) []string {
	var out []string
	for _, w := range c.workers {
		_ = filepath.WalkDir(w.spec.Dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && keep(d.Name()) {
				out = append(out, path)
			}
			return nil
		})
	}
	sort.Strings(out)
	return out
}

// scanWARCs reads every WARC of the workers strictly (gowarc's strict
// validation, every digest checked) and returns the captures (response
// and revisit records of http(s) URLs) by location. A record that fails
// counts once; a file that cannot be read past it counts once more.
func (c *cluster) scanWARCs(r *report) map[loc]string {
	out := map[loc]string{}
	files := c.workerFiles(func(n string) bool { return strings.Contains(n, ".warc") })
	for _, path := range files {
		if strings.HasSuffix(path, ".open") {
			r.openFiles++
			r.example("WARC files left open", path)
		}
		r.warcFiles++
		scanWARC(path, r, out)
	}
	return out
}

func scanWARC(path string, r *report, out map[loc]string) {
	name := strings.TrimSuffix(filepath.Base(path), ".open")
	rd, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation(), gowarc.WithBlockErrorPolicy(gowarc.ErrFail),
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail), gowarc.WithUnknownRecordTypePolicy(gowarc.ErrFail), gowarc.WithFixDigest(false))
	if err != nil {
		r.warcInvalid++
		r.example("WARC records failing validation", fmt.Sprintf("%s: %v", path, err))
		return
	}
	defer func() { _ = rd.Close() }()
	for {
		rec, off, v, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			r.warcInvalid++
			r.example("WARC records failing validation", fmt.Sprintf("%s@%d: %v", path, off, err))
			return
		}
		r.warcRecords++
		bad := v != nil && !v.Valid()
		if raw, err := rec.Block().RawBytes(); err != nil {
			bad = true
		} else if _, err := io.Copy(io.Discard, raw); err != nil {
			bad = true
		}
		if err := rec.ValidateDigest(v); err != nil || (v != nil && !v.Valid()) {
			bad = true
		}
		if bad {
			r.warcInvalid++
			r.example("WARC records failing validation", fmt.Sprintf("%s@%d: %v", path, off, v))
		}
		u := rec.WarcHeader().Get(gowarc.WarcTargetURI)
		if (rec.Type() == gowarc.Response || rec.Type() == gowarc.Revisit) && !strings.HasPrefix(u, "dns:") {
			out[loc{name, off}] = u
		}
		_ = rec.Close()
	}
}

// crawlLogCounts reads every crawl.log line of the workers and counts
// them by status and URL (columns 2 and 4).
func (c *cluster) crawlLogCounts(r *report) map[string]int {
	out := map[string]int{}
	for _, path := range c.workerFiles(func(n string) bool { return strings.HasPrefix(n, "crawl.log") }) {
		f, err := os.Open(path)
		if err != nil {
			c.t.Fatalf("crawl.log: %v", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 12 {
				continue
			}
			r.logLines++
			if strings.Contains(fs[11], "recoveredFromWarc") {
				r.evidence["crawl.log lines recovered from WARCs"]++
			}
			out[fs[1]+" "+fs[3]]++
		}
		_ = f.Close()
		if err := sc.Err(); err != nil {
			c.t.Fatalf("read %s: %v", path, err)
		}
	}
	return out
}

// queryCDX asks the cdxwriter's OutbackCDX API for every line of each
// authority (one host query each) and returns them by WARC location.
func (c *cluster) queryCDX(auths map[string]bool) map[loc]string {
	out := map[loc]string{}
	cl := &http.Client{Timeout: 2 * time.Minute}
	for h := range auths {
		q := url.Values{"url": {"http://" + h + "/"}, "matchType": {"host"}}
		resp, err := cl.Get("http://" + c.cdx.spec.CDXAddr + "/fc?" + q.Encode())
		if err != nil {
			c.t.Fatalf("CDX query %s: %v", h, err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			// CDX11: urlkey timestamp original mimetype status digest
			// redirect robotflags length offset filename
			fs := strings.Fields(sc.Text())
			if len(fs) != 11 {
				continue
			}
			var off int64
			if _, err := fmt.Sscan(fs[9], &off); err != nil {
				continue
			}
			out[loc{fs[10], off}] = fs[2]
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			c.t.Fatalf("CDX query %s: %s", h, resp.Status)
		}
	}
	return out
}

// authority is the host:port of an http(s) URL.
func authority(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Host
}
