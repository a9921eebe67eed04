package harveststats

import (
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Launch identifies one launch of a target: its source tag and the 14-digit
// launch timestamp; Timestamp is empty for sources launched without one
// (the domain crawl's bulk seeds), whose one launch is the whole crawl.
type Launch struct {
	Source    string `json:"source"`
	Timestamp string `json:"launchTimestamp"`
}

// Key is the launch's key on <crawl>.harveststats and in Redis: the
// timestamp first (fixed width, or empty), a space, then the source tag,
// which never holds a space.
func (l Launch) Key() string { return l.Timestamp + " " + l.Source }

// String is Key.
func (l Launch) String() string { return l.Key() }

// ParseKey undoes Key.
func ParseKey(k string) (Launch, error) {
	ts, src, ok := strings.Cut(k, " ")
	if !ok || (ts != "" && len(ts) != 14) {
		return Launch{}, fmt.Errorf("harvest statistics: bad launch key %q", k)
	}
	return Launch{Source: src, Timestamp: ts}, nil
}

// LaunchTimestamp returns the "launchTimestamp:<ts>" annotation of an event
// (comma-joined annotations), "" when there is none.
func LaunchTimestamp(annotations string) string {
	for a := range strings.SplitSeq(annotations, ",") {
		if ts, ok := strings.CutPrefix(a, "launchTimestamp:"); ok && len(ts) == 14 {
			return ts
		}
	}
	return ""
}

// Domain is the domain an event is counted under, as NetarchiveSuite counts
// per domain: the registrable domain (eTLD+1) of the URL's host, the host
// itself when it has none (an IP address, localhost), and for "dns:host"
// the host's domain.
func Domain(ev *messages.Crawled) string {
	host := ev.Host
	if strings.HasPrefix(ev.URL, "dns:") {
		host = strings.TrimPrefix(ev.URL, "dns:")
	} else if u, err := url.Parse(ev.URL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.Contains(h, "[") {
		host = h
	}
	if host == "" {
		return "-"
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return d
	}
	return host
}
