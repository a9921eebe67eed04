package harveststats

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Stop reason codes, NetarchiveSuite's StopReason with Trawler's additions.
const (
	// ReasonCompleted: the domain had nothing left when its launch ended
	// (NAS DOWNLOAD_COMPLETE).
	ReasonCompleted = "completed"
	// ReasonObjectLimit: the crawl's document limit (maxDocumentsDownload)
	// stopped it (NAS OBJECT_LIMIT).
	ReasonObjectLimit = "object_limit"
	// ReasonByteLimit: a byte limit stopped it: the crawl's
	// maxBytesDownload (NAS SIZE_LIMIT) or a byte quota of the domain's
	// server, host or target, *MaxSuccessKb / *MaxAllKb (NAS
	// CONFIG_SIZE_LIMIT). Detail names which.
	ReasonByteLimit = "byte_limit"
	// ReasonTimeLimit: the crawl's maxTimeSeconds (status -5004, or the
	// crawl ended by it) stopped it (NAS TIME_LIMIT).
	ReasonTimeLimit = "time_limit"
	// ReasonQuota: an object quota (*MaxFetchSuccesses,
	// *MaxFetchResponses) stopped it (NAS CONFIG_OBJECT_LIMIT). Detail
	// names which.
	ReasonQuota = "quota"
	// ReasonRobots: robots.txt precluded everything but itself.
	ReasonRobots = "robots"
	// ReasonDNS: the domain's names did not resolve.
	ReasonDNS = "dns_failure"
	// ReasonTerminated: the operator terminated the crawl or the target
	// before the launch finished.
	ReasonTerminated = "terminated"
	// ReasonRunning: the launch is still running (NAS
	// DOWNLOAD_UNFINISHED while a job runs).
	ReasonRunning = "running"
)

// StopReason says why a domain's harvest in a launch stopped.
type StopReason struct {
	Code string `json:"code"`
	// Detail names the limit or quota, e.g. "hostMaxFetchSuccesses".
	Detail string `json:"detail,omitempty"`
}

// String is the reason as the text report prints it.
func (r StopReason) String() string {
	if r.Detail == "" {
		return r.Code
	}
	return r.Code + " (" + r.Detail + ")"
}

// DomainStats is one domain's harvest in one launch.
type DomainStats struct {
	Domain string `json:"domain"`
	// URIs counts distinct URIs finished (dns: included).
	URIs int64 `json:"uris"`
	// ByStatus counts URIs by status: HTTP classes "2xx".."5xx", and
	// Heritrix's negative codes and 1 (dns success) by number.
	ByStatus map[string]int64 `json:"byStatus"`
	// Novel objects and bytes are fetched content new to the archive;
	// Duplicate ones were written as revisits (duplicate:digest).
	NovelObjects    int64 `json:"novelObjects"`
	NovelBytes      int64 `json:"novelBytes"`
	DuplicateObject int64 `json:"duplicateObjects"`
	DuplicateBytes  int64 `json:"duplicateBytes"`
	// FirstFetch and LastFetch bound the event times (UTC).
	FirstFetch time.Time  `json:"firstFetch"`
	LastFetch  time.Time  `json:"lastFetch"`
	StopReason StopReason `json:"stopReason"`

	// what the stop reason is decided from (kept out of the JSON).
	quotas                 map[string]int64
	robots, dns, time, got int64
}

// LaunchStats is the harvest statistics of one launch.
type LaunchStats struct {
	Crawl  string `json:"crawl"`
	Launch Launch `json:"launch"`
	// State is running, completed, terminated or the crawl-wide limit
	// code that ended the crawl before the launch finished.
	State   string        `json:"state"`
	Domains []DomainStats `json:"domains"`
	// DomainsOmitted, when not 0, is how many domains a published record
	// left out (Domains then empty): a launch's table too large for one
	// record (millions of domains) is in its metadata WARC and report
	// files only.
	DomainsOmitted int `json:"domainsOmitted,omitempty"`
	// Totals adds the domains up (StopReason and Domain empty).
	Totals DomainStats `json:"totals"`
}

// Launch states besides the stop reason codes.
const (
	// StateRunning: the launch has URIs queued or in flight.
	StateRunning = ReasonRunning
	// StateCompleted: nothing of it is left in the frontier.
	StateCompleted = ReasonCompleted
)

// Ways an event's count combines with the launch's: added, or kept as the
// smallest or largest value (first and last fetch).
const (
	opAdd = '+'
	opMin = '<'
	opMax = '>'
)

// eventCounts passes one event's counts to emit, keyed
// "<domain>|<field>"; decode reads the combined counts back.
func eventCounts(domain string, ev *messages.Crawled, emit func(op byte, key string, n int64)) {
	add := func(name string, n int64) { emit(opAdd, domain+"|"+name, n) }
	add("uris", 1)
	add("s:"+statusClass(ev.StatusCode), 1)
	size := int64(0)
	if ev.Size != nil {
		size = *ev.Size
	}
	switch {
	case ev.StatusCode > 0 && isDuplicate(ev.Annotations):
		add("dup", 1)
		add("dupb", size)
	case ev.StatusCode > 0:
		add("new", 1)
		add("newb", size)
	}
	if ev.StatusCode > 0 && !strings.HasPrefix(ev.URL, "dns:") && !isRobotsTxt(ev.URL) {
		add("got", 1)
	}
	switch ev.StatusCode {
	case -9998:
		add("robots", 1)
	case -6, -1:
		add("dns", 1)
	case -5004:
		add("time", 1)
	case -5003:
		for a := range strings.SplitSeq(ev.Annotations, ",") {
			if q, ok := strings.CutPrefix(a, "Q:"); ok && q != "" {
				add("q:"+q, 1)
			}
		}
	}
	if at, err := ev.Time(); err == nil {
		ms := at.UnixMilli()
		emit(opMin, domain+"|first", ms)
		emit(opMax, domain+"|last", ms)
	}
}

// tally adds one event's counts to counts.
func tally(counts map[string]int64, domain string, ev *messages.Crawled) {
	eventCounts(domain, ev, func(op byte, key string, n int64) { combine(counts, op, key, n) })
}

// combine applies one count to counts.
func combine(counts map[string]int64, op byte, key string, n int64) {
	v, ok := counts[key]
	switch {
	case op == opAdd:
		counts[key] = v + n
	case !ok, op == opMin && n < v, op == opMax && n > v:
		counts[key] = n
	}
}

func statusClass(code int) string {
	if code >= 100 && code < 600 {
		return strconv.Itoa(code/100) + "xx"
	}
	return strconv.Itoa(code)
}

func isDuplicate(annotations string) bool {
	for a := range strings.SplitSeq(annotations, ",") {
		if strings.HasPrefix(a, "duplicate:") {
			return true
		}
	}
	return false
}

func isRobotsTxt(u string) bool {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return false
	}
	_, path, _ := strings.Cut(rest, "/")
	return path == "robots.txt"
}

// decode builds the domain list from the counts.
func decode(counts map[string]int64) []DomainStats {
	byDomain := map[string]*DomainStats{}
	for k, n := range counts {
		domain, field, ok := strings.Cut(k, "|")
		if !ok {
			continue
		}
		d := byDomain[domain]
		if d == nil {
			d = &DomainStats{Domain: domain, ByStatus: map[string]int64{}, quotas: map[string]int64{}}
			byDomain[domain] = d
		}
		switch {
		case field == "uris":
			d.URIs = n
		case field == "new":
			d.NovelObjects = n
		case field == "newb":
			d.NovelBytes = n
		case field == "dup":
			d.DuplicateObject = n
		case field == "dupb":
			d.DuplicateBytes = n
		case field == "got":
			d.got = n
		case field == "robots":
			d.robots = n
		case field == "dns":
			d.dns = n
		case field == "time":
			d.time = n
		case field == "first":
			d.FirstFetch = time.UnixMilli(n).UTC()
		case field == "last":
			d.LastFetch = time.UnixMilli(n).UTC()
		case strings.HasPrefix(field, "s:"):
			d.ByStatus[field[2:]] = n
		case strings.HasPrefix(field, "q:"):
			d.quotas[field[2:]] = n
		}
	}
	out := make([]DomainStats, 0, len(byDomain))
	for _, d := range byDomain {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b DomainStats) int { return cmp.Compare(a.Domain, b.Domain) })
	return out
}

// decide sets each domain's stop reason for a launch in state. What the
// domain's own events show wins (a quota, a limit, robots, DNS); a domain
// with nothing of its own stopped takes the launch's state.
func decide(domains []DomainStats, state string) {
	for i := range domains {
		domains[i].StopReason = reasonOf(&domains[i], state)
	}
}

func reasonOf(d *DomainStats, state string) StopReason {
	if len(d.quotas) > 0 {
		names := make([]string, 0, len(d.quotas))
		for q := range d.quotas {
			names = append(names, q)
		}
		slices.Sort(names)
		// Bytes quotas first: a domain stopped by both is reported by
		// the one NetarchiveSuite puts first (CONFIG_SIZE_LIMIT).
		for _, q := range names {
			if strings.HasSuffix(q, "Kb") {
				return StopReason{Code: ReasonByteLimit, Detail: q}
			}
		}
		return StopReason{Code: ReasonQuota, Detail: names[0]}
	}
	if d.time > 0 {
		return StopReason{Code: ReasonTimeLimit, Detail: "maxTimeSeconds"}
	}
	if d.got == 0 && d.robots > 0 {
		return StopReason{Code: ReasonRobots}
	}
	if d.got == 0 && d.dns > 0 {
		return StopReason{Code: ReasonDNS}
	}
	switch state {
	case StateCompleted, StateRunning, ReasonTerminated:
		return StopReason{Code: state}
	case "maxDocumentsDownload", "maxNovelUrls":
		return StopReason{Code: ReasonObjectLimit, Detail: state}
	case "maxBytesDownload", "maxNovelBytes":
		return StopReason{Code: ReasonByteLimit, Detail: state}
	case "maxTimeSeconds":
		return StopReason{Code: ReasonTimeLimit, Detail: state}
	}
	return StopReason{Code: state}
}

// total adds the domains up.
func total(domains []DomainStats) DomainStats {
	t := DomainStats{ByStatus: map[string]int64{}}
	for _, d := range domains {
		t.URIs += d.URIs
		t.NovelObjects += d.NovelObjects
		t.NovelBytes += d.NovelBytes
		t.DuplicateObject += d.DuplicateObject
		t.DuplicateBytes += d.DuplicateBytes
		for k, v := range d.ByStatus {
			t.ByStatus[k] += v
		}
		if !d.FirstFetch.IsZero() && (t.FirstFetch.IsZero() || d.FirstFetch.Before(t.FirstFetch)) {
			t.FirstFetch = d.FirstFetch
		}
		if d.LastFetch.After(t.LastFetch) {
			t.LastFetch = d.LastFetch
		}
	}
	return t
}
