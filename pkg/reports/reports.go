// Package reports writes Heritrix3's end-of-crawl reports (crawl-report.txt,
// seeds-report.txt, hosts-report.txt, source-report.txt, mimetype-report.txt
// and responsecode-report.txt) from the crawled events of a run, with
// Heritrix's file names, headers, columns, sort orders and number formats.
package reports

import (
	"strconv"
	"strings"
	"sync"

	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

// DefaultMaxKeys bounds each tally table (hosts, MIME types, status codes,
// source×host pairs, seeds) when Options.MaxKeys is 0.
const DefaultMaxKeys = 1 << 20

// Options configures an Aggregator.
type Options struct {
	// CrawlName is printed as the crawl name in crawl-report.txt.
	CrawlName string
	// Seeds lists every seed, crawled or not: uncrawled ones are reported
	// NOTCRAWLED with code 0, as Heritrix reports added-but-unprocessed seeds.
	Seeds []string
	// MaxKeys bounds each table; events that would add a key past it are
	// still counted in the totals and reported by Dropped. 0 means
	// DefaultMaxKeys.
	MaxKeys int
	// RedirectSeedHops is set when the crawl made the targets of seeds'
	// redirects seeds (seedsRedirectNewSeeds): a URI reached from a seed
	// by fewer than this many redirects and nothing else is reported as a
	// seed of its own, as Heritrix's StatisticsTracker reports the seeds
	// its CandidatesProcessor added. 0: redirect targets are not seeds.
	RedirectSeedHops int
	// ExternalHosts keeps no host tables: the caller builds the hosts
	// and source reports (hostrows.go) and gives them to WriteAll
	// (RunInfo.HostsFile, SourcesFile), for more hosts than memory holds.
	ExternalHosts bool
}

// Aggregator tallies crawled events as Heritrix's StatisticsTracker does.
// It is safe for concurrent use; Add is O(1) per event.
type Aggregator struct {
	mu      sync.Mutex
	opts    Options
	hosts   map[string]*hostStats
	mimes   map[string]*mimeStats
	codes   map[string]int64
	sources map[string]map[string]int64
	pairs   int // source×host entries, bounded by MaxKeys
	seeds   map[string]*seedRecord
	// redirects are the URIs reached from a seed by redirects alone, by
	// canonical URL (Options.RedirectSeedHops), kept whatever order the
	// journal gives their events in.
	redirects map[string]*redirectHop

	crawled                        bytesTally // successes only (crawledBytes)
	succeeded, failed, disregarded int64
	bad, dropped                   int64
}

// bytesTally is Heritrix's CrawledBytesHistotable: URLs and bytes by
// revisit kind.
type bytesTally struct {
	count, bytes [kinds]int64
}

// Revisit kinds, in CrawledBytesHistotable's order of precedence.
const (
	novel = iota
	dupByHash
	notModified
	otherDup
	kinds
)

func (b *bytesTally) add(kind int, size int64) {
	b.count[kind]++
	b.bytes[kind] += size
}

func (b *bytesTally) totalBytes() int64 {
	var t int64
	for _, v := range b.bytes {
		t += v
	}
	return t
}

// hostStats is the part of Heritrix's per-host FetchStats the hosts report
// prints.
type hostStats struct {
	successes, totalBytes, robots int64
	bytesTally
}

type mimeStats struct{ count, bytes int64 }

// seedRecord is Heritrix's SeedRecord: the seed's last status and, for a
// redirect, where it went.
type seedRecord struct {
	uri      string
	status   int
	redirect string
}

// redirectHop is the last event of a URI whose hop path is all redirects.
type redirectHop struct {
	via    string // canonical
	status int
	hops   int
}

// New returns an empty Aggregator knowing every seed and its host.
func New(o Options) *Aggregator {
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	a := &Aggregator{
		opts:      o,
		hosts:     make(map[string]*hostStats),
		mimes:     make(map[string]*mimeStats),
		codes:     make(map[string]int64),
		sources:   make(map[string]map[string]int64),
		seeds:     make(map[string]*seedRecord, len(o.Seeds)),
		redirects: make(map[string]*redirectHop),
	}
	for _, s := range o.Seeds {
		key := seedKey(s)
		if _, ok := a.seeds[key]; !ok && len(a.seeds) < o.MaxKeys {
			a.seeds[key] = &seedRecord{uri: key}
		}
		// Heritrix's server cache holds every scheduled seed's host, so the
		// hosts report lists a seed host even when nothing was fetched.
		if h, err := uri.Host(key); err == nil && !o.ExternalHosts {
			a.host(h)
		}
	}
	return a
}

// seedKey is the form a seed is reported under: canonical when it parses.
func seedKey(s string) string {
	if n, err := uri.Normalize(s); err == nil {
		return n
	}
	return s
}

// Bad returns how many events were skipped as malformed (no URL, or no
// host to tally them under).
func (a *Aggregator) Bad() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bad
}

// Dropped returns how many table entries were not created because a table
// was full (Options.MaxKeys).
func (a *Aggregator) Dropped() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dropped
}

// Disposition of a finished URI, as Heritrix's frontier decides it.
const (
	succeeded = iota
	failed
	disregarded
)

// disposition mirrors WorkQueueFrontier: positive codes succeed; robots,
// scope, user and hop-limit exclusions (and the renderer hand-off, -5002)
// are disregarded; everything else failed.
func disposition(status int) int {
	switch {
	case status > 0:
		return succeeded
	case status == -9998, status == -5002, status == -5000, status == -5001,
		status == -4002, status == -4001, status == -6000:
		return disregarded
	default:
		return failed
	}
}

// revisitKind classifies a fetch as Heritrix's revisit profiles do: a 304 is
// server-not-modified, "duplicate:digest" is identical-payload-digest, any
// other "duplicate:" annotation another kind of duplicate.
func revisitKind(ev *messages.Crawled) int {
	if ev.StatusCode == 304 {
		return notModified
	}
	kind := novel
	for a := range strings.SplitSeq(ev.Annotations, ",") {
		switch {
		case a == "duplicate:digest":
			return dupByHash
		case a == "duplicate:server-not-modified":
			return notModified
		case strings.HasPrefix(a, "duplicate:"):
			kind = otherDup
		}
	}
	return kind
}

// hostOf names the host a URI is tallied under: "dns:" for every DNS
// lookup (Heritrix's ServerCache), else the URL's host.
func hostOf(ev *messages.Crawled) (string, bool) {
	switch {
	case strings.HasPrefix(ev.URL, "dns:"):
		return "dns:", true
	case strings.HasPrefix(ev.URL, "whois:"):
		return "whois:", true
	}
	// Heritrix tallies by CrawlHost, the host name without the port; the
	// event's host field carries the port, so the URL decides.
	if a, ok := hostkey.NormalAuthority(ev.URL); ok {
		h, _, _ := strings.Cut(a, ":")
		return h, true
	}
	if h, err := uri.Host(ev.URL); err == nil && h != "" {
		return h, true
	}
	h := ev.Host
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		h = h[:i]
	}
	return h, h != ""
}

// Add tallies one crawled event.
func (a *Aggregator) Add(ev messages.Crawled) {
	a.mu.Lock()
	defer a.mu.Unlock()
	hostName, ok := hostOf(&ev)
	if strings.TrimSpace(ev.URL) == "" || !ok {
		a.bad++
		return
	}
	size := int64(0)
	if ev.Size != nil && *ev.Size > 0 {
		size = *ev.Size
	}
	kind := revisitKind(&ev)
	a.noteSeed(&ev)
	var h *hostStats
	if !a.opts.ExternalHosts {
		h = a.host(hostName)
	}
	switch disposition(ev.StatusCode) {
	case succeeded:
		a.succeeded++
		a.crawled.add(kind, size)
		a.codes[strconv.Itoa(ev.StatusCode)]++ // a few hundred codes at most
		a.addMime(crawllog.TruncateMIME(ev.Mimetype), size)
		if !a.opts.ExternalHosts {
			a.addSource(ev.Seed, hostName)
		}
		if h != nil {
			h.successes++
			h.totalBytes += size
		}
	case disregarded:
		a.disregarded++
		if h != nil && ev.StatusCode == -9998 {
			h.robots++
		}
	default:
		a.failed++
	}
	if h != nil && ev.StatusCode > 0 {
		h.add(kind, size)
	}
}

// host returns the host's stats, creating them while the table has room.
func (a *Aggregator) host(name string) *hostStats {
	h := a.hosts[name]
	if h == nil {
		if len(a.hosts) >= a.opts.MaxKeys {
			a.dropped++
			return nil
		}
		h = &hostStats{}
		a.hosts[name] = h
	}
	return h
}

func (a *Aggregator) addMime(mime string, size int64) {
	m := a.mimes[mime]
	if m == nil {
		if len(a.mimes) >= a.opts.MaxKeys {
			a.dropped++
			return
		}
		m = &mimeStats{}
		a.mimes[mime] = m
	}
	m.count++
	m.bytes += size
}

// addSource counts a success under its source tag and host
// (sourceHostDistribution); untagged URIs are not counted.
func (a *Aggregator) addSource(source, host string) {
	if source == "" || source == "-" {
		return
	}
	hosts := a.sources[source]
	if _, ok := hosts[host]; !ok {
		if a.pairs >= a.opts.MaxKeys {
			a.dropped++
			return
		}
		a.pairs++
		if hosts == nil {
			hosts = make(map[string]int64)
			a.sources[source] = hosts
		}
	}
	hosts[host]++
}

// noteSeed updates the seed record of a seed event and the redirect of a
// seed's "R" child. A hop-less event from a WARC-writing proxy is a
// seed only when the seed list names it: proxies leave hop_path empty for
// everything they record.
func (a *Aggregator) noteSeed(ev *messages.Crawled) {
	switch ev.HopPath {
	case "", "-":
		rec := a.seedFor(ev.URL)
		if rec == nil && ev.WarcType == "" && ev.HTTPMethod == "" {
			if len(a.seeds) >= a.opts.MaxKeys {
				a.dropped++
				return
			}
			key := seedKey(ev.URL)
			rec = &seedRecord{uri: key}
			a.seeds[key] = rec
		}
		if rec != nil {
			rec.status = ev.StatusCode
		}
	default:
		if strings.Trim(ev.HopPath, "R") != "" {
			return
		}
		if ev.HopPath == "R" {
			if rec := a.seedFor(ev.Via); rec != nil {
				rec.redirect = ev.URL
			}
		}
		// One past the bound too: the last seed's redirect is reported.
		if len(ev.HopPath) <= a.opts.RedirectSeedHops {
			a.noteRedirect(ev)
		}
	}
}

// noteRedirect keeps the status and via of a URI reached by redirects
// only; seedRecords decides at report time whether it is a seed, since
// the journal's partitions may give its event before its via's.
func (a *Aggregator) noteRedirect(ev *messages.Crawled) {
	key := seedKey(ev.URL)
	r := a.redirects[key]
	if r == nil {
		if len(a.redirects) >= a.opts.MaxKeys {
			a.dropped++
			return
		}
		r = &redirectHop{}
		a.redirects[key] = r
	}
	r.via, r.status, r.hops = seedKey(ev.Via), ev.StatusCode, len(ev.HopPath)
}

// seedRecords are the seeds to report: those given or crawled as seeds,
// and, with Options.RedirectSeedHops, the redirect targets of seeds (and
// of those, a link of the chain per round), each with where it redirected
// to in turn. Callers hold mu.
func (a *Aggregator) seedRecords() []*seedRecord {
	recs := make(map[string]*seedRecord, len(a.seeds)+len(a.redirects))
	for k, s := range a.seeds {
		recs[k] = s
	}
	for range a.opts.RedirectSeedHops {
		added := false
		for u, r := range a.redirects {
			if r.hops < a.opts.RedirectSeedHops && recs[u] == nil && recs[r.via] != nil {
				recs[u] = &seedRecord{uri: u, status: r.status}
				added = true
			}
		}
		if !added {
			break
		}
	}
	// A promoted seed's own redirect is the chain's next link (the least
	// URL if it had several, so the report does not vary between runs).
	next := make(map[string]string)
	for u, r := range a.redirects {
		if n, ok := next[r.via]; !ok || u < n {
			next[r.via] = u
		}
	}
	out := make([]*seedRecord, 0, len(recs))
	for k, s := range recs {
		if _, given := a.seeds[k]; !given {
			s.redirect = next[k]
		}
		out = append(out, s)
	}
	return out
}

// seedFor finds a seed's record by its URL as given or in canonical form.
func (a *Aggregator) seedFor(u string) *seedRecord {
	if u == "" || u == "-" {
		return nil
	}
	if rec := a.seeds[u]; rec != nil {
		return rec
	}
	return a.seeds[seedKey(u)]
}
