package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

// A crawl of tens of millions of hosts (the domain crawl) cannot hold the
// hosts report's table in memory. With Options.ExternalHosts the
// Aggregator keeps no host table; the caller tallies each event's
// HostRowOf (and each seed's SeedHost) by host itself, by external sort,
// adds the rows of a host up, orders them as the report does
// (HostsOrderKey) and writes them with AppendHostLine; WriteAll then
// copies that file (RunInfo.HostsFile) and prints RunInfo.HostsVisited.

// The source report's (source × host) table is the same: with
// ExternalHosts the caller counts SourceHostOf's pairs, orders them by
// SourceOrderKey and writes them with AppendSourceLine under
// SourceReportHeader (or NoSourceReport when there is none), and WriteAll
// copies RunInfo.SourcesFile.

// Source report texts.
const (
	SourceReportHeader = "[source] [host] [#urls]\n"
	NoSourceReport     = "No source tag information. (Is 'sourceTagSeeds' enabled?)\n"
)

// SourceHostOf is the source tag and host a success is counted under in
// the source report; false for an event it does not count.
func SourceHostOf(ev *messages.Crawled) (source, host string, ok bool) {
	host, ok = hostOf(ev)
	if strings.TrimSpace(ev.URL) == "" || !ok || disposition(ev.StatusCode) != succeeded ||
		ev.Seed == "" || ev.Seed == "-" {
		return "", "", false
	}
	return ev.Seed, host, true
}

// SourceOrderKey is a bytewise-sortable key putting a source's host where
// the source report does: by source, then most URLs first, then by host.
func SourceOrderKey(source, host string, count int64) []byte {
	return fmt.Appendf(nil, "%s\x00%020d\x00%s", source, uint64(1<<63-1-count), host)
}

// AppendSourceLine appends one line of the source report.
func AppendSourceLine(dst []byte, source, host string, count int64) []byte {
	return fmt.Appendf(dst, "%s %s %d\n", source, host, count)
}

// HostsReportHeader is the hosts report's first line.
const HostsReportHeader = "[#urls] [#bytes] [host] [#robots] [#remaining] [#novel-urls] [#novel-bytes] [#dup-by-hash-urls] [#dup-by-hash-bytes] [#not-modified-urls] [#not-modified-bytes]\n"

// HostRow is one host's tallies in the hosts report, or one event's part
// of them.
type HostRow struct {
	Successes, TotalBytes, Robots int64
	Count, Bytes                  [kinds]int64
}

// HostRowOf is what Add tallies of ev under its host, and that host;
// false for an event Add counts as bad.
func HostRowOf(ev *messages.Crawled) (string, HostRow, bool) {
	host, ok := hostOf(ev)
	if strings.TrimSpace(ev.URL) == "" || !ok {
		return "", HostRow{}, false
	}
	var h hostStats
	size := int64(0)
	if ev.Size != nil && *ev.Size > 0 {
		size = *ev.Size
	}
	kind := revisitKind(ev)
	switch disposition(ev.StatusCode) {
	case succeeded:
		h.successes++
		h.totalBytes += size
	case disregarded:
		if ev.StatusCode == -9998 {
			h.robots++
		}
	}
	if ev.StatusCode > 0 {
		h.add(kind, size)
	}
	return host, HostRow{Successes: h.successes, TotalBytes: h.totalBytes, Robots: h.robots, Count: h.count, Bytes: h.bytes}, true
}

// SeedHost is the host a seed puts in the hosts report (with no tallies)
// even when nothing was fetched from it, as New does; false for none.
func SeedHost(seed string) (string, bool) {
	h, err := uri.Host(seedKey(seed))
	return h, err == nil
}

// Add adds o's tallies to r.
func (r *HostRow) Add(o HostRow) {
	r.Successes += o.Successes
	r.TotalBytes += o.TotalBytes
	r.Robots += o.Robots
	for i := range r.Count {
		r.Count[i] += o.Count[i]
		r.Bytes[i] += o.Bytes[i]
	}
}

// Encode is r as space-separated numbers (DecodeHostRow reads them).
func (r HostRow) Encode() []byte {
	b := strconv.AppendInt(nil, r.Successes, 10)
	for _, n := range append([]int64{r.TotalBytes, r.Robots}, append(r.Count[:], r.Bytes[:]...)...) {
		b = strconv.AppendInt(append(b, ' '), n, 10)
	}
	return b
}

// DecodeHostRow reads Encode's form.
func DecodeHostRow(b []byte) (HostRow, error) {
	f := strings.Fields(string(b))
	if len(f) != 3+2*kinds {
		return HostRow{}, fmt.Errorf("host row %q: %d fields, want %d", b, len(f), 3+2*kinds)
	}
	n := make([]int64, len(f))
	for i, s := range f {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return HostRow{}, fmt.Errorf("host row %q: field %d: %w", b, i+1, err)
		}
		n[i] = v
	}
	r := HostRow{Successes: n[0], TotalBytes: n[1], Robots: n[2]}
	copy(r.Count[:], n[3:3+kinds])
	copy(r.Bytes[:], n[3+kinds:])
	return r, nil
}

// HostsOrderKey is a bytewise-sortable key putting a host's row where the
// hosts report does: most successes first, then by host name.
func HostsOrderKey(host string, r HostRow) []byte {
	return fmt.Appendf(nil, "%020d\x00%s", uint64(1<<63-1-r.Successes), host)
}

// AppendHostLine appends host's line of the hosts report, with remaining
// URIs queued for it.
func AppendHostLine(dst []byte, host string, r HostRow, remaining int64) []byte {
	return fmt.Appendf(dst, "%d %d %s %d %d %d %d %d %d %d %d \n",
		r.Successes, r.TotalBytes, fixUpName(host), r.Robots, remaining,
		r.Count[novel], r.Bytes[novel], r.Count[dupByHash], r.Bytes[dupByHash],
		r.Count[notModified], r.Bytes[notModified])
}
