package reports

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// RunInfo describes the finished run for crawl-report.txt and the
// #remaining column of hosts-report.txt.
type RunInfo struct {
	// Start and End bound the run; the duration is End-Start (0 when Start
	// is zero).
	Start, End time.Time
	// Status is the crawl's exit status, e.g. "Finished" or "Finished -
	// Maximum number of documents limit hit"; default "Finished".
	Status string
	// Remaining returns the URIs still queued for a host name (a row of
	// the hosts report), over all its ports; nil means 0.
	Remaining func(host string) int64
	// HostsFile and SourcesFile are the hosts and source reports,
	// written by the caller, and HostsVisited the hosts crawl-report.txt
	// counts, when the Aggregator keeps no host tables
	// (Options.ExternalHosts).
	HostsFile, SourcesFile string
	HostsVisited           int
}

// File names, as Heritrix writes them.
const (
	CrawlReport        = "crawl-report.txt"
	SeedsReport        = "seeds-report.txt"
	HostsReport        = "hosts-report.txt"
	SourceReport       = "source-report.txt"
	MimetypeReport     = "mimetype-report.txt"
	ResponseCodeReport = "responsecode-report.txt"
)

// WriteAll writes the six reports into dir (created if missing), each
// through a temporary file renamed into place, so a reader never sees a
// half-written report.
func (a *Aggregator) WriteAll(dir string, info RunInfo) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reports dir %s: %w", dir, err)
	}
	a.mu.Lock()
	files := []struct {
		name string
		data []byte
	}{
		{CrawlReport, a.crawlReport(info)},
		{SeedsReport, a.seedsReport()},
		{HostsReport, nil},
		{SourceReport, nil},
		{MimetypeReport, a.mimetypeReport()},
		{ResponseCodeReport, a.responseCodeReport()},
	}
	external := map[string]string{HostsReport: info.HostsFile, SourceReport: info.SourcesFile}
	if !a.opts.ExternalHosts {
		files[2].data, files[3].data = a.hostsReport(info.Remaining), a.sourceReport()
	}
	a.mu.Unlock()
	for _, f := range files {
		if src, ok := external[f.name]; ok && a.opts.ExternalHosts {
			if err := copyAtomic(dir, f.name, src); err != nil {
				return err
			}
			continue
		}
		if err := writeAtomic(dir, f.name, f.data); err != nil {
			return err
		}
	}
	return nil
}

// copyAtomic is writeAtomic of the file src, read as it is copied.
func copyAtomic(dir, name, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("write report %s: %w", name, err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("write report %s: %w", name, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	_, err = io.Copy(tmp, in)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		return fmt.Errorf("write report %s: %w", name, err)
	}
	return nil
}

func writeAtomic(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("write report %s: %w", name, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write report %s: %w", name, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write report %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write report %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("write report %s: %w", name, err)
	}
	return nil
}

// crawlReport is CrawlSummaryReport: note the trailing spaces after some
// byte counts, which Heritrix prints.
func (a *Aggregator) crawlReport(info RunInfo) []byte {
	var b bytes.Buffer
	status := info.Status
	if status == "" {
		status = "Finished"
	}
	var elapsed int64
	if !info.Start.IsZero() {
		elapsed = max(info.End.Sub(info.Start).Milliseconds(), 0)
	}
	fmt.Fprintf(&b, "crawl name: %s\ncrawl status: %s\nduration: %s\n\n",
		a.opts.CrawlName, status, formatDuration(elapsed))
	crawledSeeds := 0
	seeds := a.seedRecords()
	for _, s := range seeds {
		if s.status > 0 {
			crawledSeeds++
		}
	}
	fmt.Fprintf(&b, "seeds crawled: %d\nseeds uncrawled: %d\n\n", crawledSeeds, len(seeds)-crawledSeeds)
	// Heritrix prints the server cache's size minus one for its "dns:"
	// entry; without DNS lookups there is nothing to subtract.
	hosts := len(a.hosts)
	if _, ok := a.hosts["dns:"]; ok {
		hosts--
	}
	if a.opts.ExternalHosts {
		hosts = info.HostsVisited
	}
	fmt.Fprintf(&b, "hosts visited: %d\n\n", hosts)
	fmt.Fprintf(&b, "URIs processed: %d\nURI successes: %d\nURI failures: %d\nURI disregards: %d\n\n",
		a.succeeded+a.failed+a.disregarded, a.succeeded, a.failed, a.disregarded)
	c := &a.crawled
	fmt.Fprintf(&b, "novel URIs: %d\n", c.count[novel])
	if c.count[dupByHash] > 0 {
		fmt.Fprintf(&b, "duplicate-by-hash URIs: %d\n", c.count[dupByHash])
	}
	if c.count[notModified] > 0 {
		fmt.Fprintf(&b, "not-modified URIs: %d\n", c.count[notModified])
	}
	total := c.totalBytes()
	fmt.Fprintf(&b, "\ntotal crawled bytes: %d (%s) \n", total, formatBytes(total))
	fmt.Fprintf(&b, "novel crawled bytes: %d (%s)\n", c.bytes[novel], formatBytes(c.bytes[novel]))
	if c.count[dupByHash] > 0 {
		fmt.Fprintf(&b, "duplicate-by-hash crawled bytes: %d (%s) \n", c.bytes[dupByHash], formatBytes(c.bytes[dupByHash]))
	}
	if c.count[notModified] > 0 {
		fmt.Fprintf(&b, "not-modified crawled bytes: %d (%s) \n", c.bytes[notModified], formatBytes(c.bytes[notModified]))
	}
	docsPerSec := float64(a.succeeded) / (float64(elapsed) / 1000)
	kibPerSec := int64((float64(total) / 1024) / (float64(elapsed+1) / 1000))
	fmt.Fprintf(&b, "\nURIs/sec: %s\nKB/sec: %d\n", formatDecimal(docsPerSec, 2, 0), kibPerSec)
	return b.Bytes()
}

// seedSortKey is Heritrix's SeedRecord.sortShiftStatusCode, including its
// int overflow: not-crawled codes (0 and negatives, descending) come first,
// then crawled codes descending.
func seedSortKey(status int) int32 {
	return -int32(status) - math.MaxInt32
}

// compareSerialString orders strings as their Java-serialised bytes do in
// Berkeley DB's sorted duplicates: shorter first (the length prefix), then
// bytewise. "" stands for null, which sorts before any string.
func compareSerialString(x, y string) int {
	return cmp.Or(cmp.Compare(len(x), len(y)), cmp.Compare(x, y))
}

// seedRedirects are the codes whose Location SeedRecord keeps.
func isSeedRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// seedsReport is SeedsReport. Records with the same code are ordered as
// Heritrix's stored map orders them: no redirect first, then by redirect,
// then by seed.
func (a *Aggregator) seedsReport() []byte {
	var b bytes.Buffer
	b.WriteString("[code] [status] [seed] [redirect]\n")
	recs := a.seedRecords()
	redirect := func(s *seedRecord) string {
		if isSeedRedirect(s.status) {
			return s.redirect
		}
		return ""
	}
	slices.SortFunc(recs, func(x, y *seedRecord) int {
		rx, ry := redirect(x), redirect(y)
		return cmp.Or(
			cmp.Compare(seedSortKey(x.status), seedSortKey(y.status)),
			compareSerialString(rx, ry),
			compareSerialString(x.uri, y.uri))
	})
	for _, s := range recs {
		word := "NOTCRAWLED"
		if s.status > 0 {
			word = "CRAWLED"
		}
		fmt.Fprintf(&b, "%d %s %s", s.status, word, s.uri)
		if r := redirect(s); r != "" {
			b.WriteString(" " + r)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// hostsReport is HostsReport: every host, most successes first, each field
// followed by a space.
func (a *Aggregator) hostsReport(remaining func(string) int64) []byte {
	var b bytes.Buffer
	b.WriteString(HostsReportHeader)
	names := make([]string, 0, len(a.hosts))
	for n := range a.hosts {
		names = append(names, n)
	}
	slices.SortFunc(names, func(x, y string) int {
		return cmp.Or(cmp.Compare(a.hosts[y].successes, a.hosts[x].successes), cmp.Compare(x, y))
	})
	for _, n := range names {
		h := a.hosts[n]
		var left int64
		if remaining != nil {
			left = remaining(n)
		}
		b.Write(AppendHostLine(nil, n, HostRow{Successes: h.successes, TotalBytes: h.totalBytes, Robots: h.robots,
			Count: h.count, Bytes: h.bytes}, left))
	}
	return b.Bytes()
}

// countedKey is one row of a reverse-sorted tally.
type countedKey struct {
	key   string
	count int64
}

// reverseSorted orders a tally as Heritrix's getReverseSortedCopy: largest
// count first, equal counts by key.
func reverseSorted(m map[string]int64) []countedKey {
	rows := make([]countedKey, 0, len(m))
	for k, v := range m {
		rows = append(rows, countedKey{k, v})
	}
	slices.SortFunc(rows, func(x, y countedKey) int {
		return cmp.Or(cmp.Compare(y.count, x.count), cmp.Compare(x.key, y.key))
	})
	return rows
}

// sourceReport is SourceTagsReport. Heritrix walks its sources in hash
// order; Trawler sorts them so the report is reproducible.
func (a *Aggregator) sourceReport() []byte {
	var b bytes.Buffer
	if len(a.sources) == 0 {
		b.WriteString(NoSourceReport)
		return b.Bytes()
	}
	b.WriteString(SourceReportHeader)
	sources := make([]string, 0, len(a.sources))
	for s := range a.sources {
		sources = append(sources, s)
	}
	slices.Sort(sources)
	for _, s := range sources {
		for _, row := range reverseSorted(a.sources[s]) {
			b.Write(AppendSourceLine(nil, s, row.key, row.count))
		}
	}
	return b.Bytes()
}

// mimetypeReport is MimetypesReport.
func (a *Aggregator) mimetypeReport() []byte {
	var b bytes.Buffer
	b.WriteString("[#urls] [#bytes] [mime-types]\n")
	counts := make(map[string]int64, len(a.mimes))
	for k, v := range a.mimes {
		counts[k] = v.count
	}
	for _, row := range reverseSorted(counts) {
		fmt.Fprintf(&b, "%d %d %s\n", row.count, a.mimes[row.key].bytes, row.key)
	}
	return b.Bytes()
}

// responseCodeReport is ResponseCodeReport (successful codes only).
func (a *Aggregator) responseCodeReport() []byte {
	var b bytes.Buffer
	b.WriteString("[#urls] [rescode]\n")
	for _, row := range reverseSorted(a.codes) {
		b.WriteString(strconv.FormatInt(row.count, 10) + " " + row.key + "\n")
	}
	return b.Bytes()
}
