package console

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/internal/costcache"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/robots"
)

// topQueues is how many queues the hosts page lists.
const topQueues = 100

// queueList caches the top queues: the read scans every host's queue, so
// one read serves the pages of the next seconds (internal/costcache), as
// the API's top hosts do.
type queueList struct {
	cache *costcache.Cache[[]frontier.HostCount]
}

func newQueueList(f *frontier.Frontier) *queueList {
	return &queueList{cache: costcache.New(func(ctx context.Context) ([]frontier.HostCount, error) {
		return f.TopQueuedHosts(ctx, topQueues)
	}, costcache.Options{})}
}

type hostsData struct {
	// Name keeps the queues of one host name (all its ports).
	Name   string
	Queues []frontier.HostCount
	At     time.Time
	Error  string
}

func (c *Console) hosts(w http.ResponseWriter, r *http.Request, s *session) {
	d := hostsData{Name: strings.TrimSpace(r.URL.Query().Get("name"))}
	if c.queues == nil {
		d.Error = "no frontier on this role"
	} else {
		qs, at, err := c.queues.cache.Get(r.Context())
		d.At = at
		if err != nil {
			d.Error = err.Error()
		}
		for _, q := range qs {
			if d.Name == "" || q.Host == d.Name || strings.HasPrefix(q.Host, d.Name+":") {
				d.Queues = append(d.Queues, q)
			}
		}
	}
	c.show(w, r, s, "hosts", "hosts", "Hosts", d)
}

// hostData is one queue's page.
type hostData struct {
	Host   string
	Known  bool
	Info   frontier.HostInfo
	Next   []frontier.QueuedURI
	Robots []robots.Cached
	Counts *logCounts
	// Reason says why the host waits, in words.
	Reason string
	Errors []string
}

// nextShown is how many queued URIs a host's page lists.
const nextShown = 50

func (c *Console) host(w http.ResponseWriter, r *http.Request, s *session) {
	h := strings.TrimSpace(r.URL.Query().Get("h"))
	if h == "" || strings.ContainsAny(h, "/ \t") {
		c.fail(w, r, s, http.StatusBadRequest, "host: want ?h=host[:port], got "+quoteOrEmpty(h))
		return
	}
	if c.d.API.Frontier == nil {
		c.fail(w, r, s, http.StatusServiceUnavailable, "no frontier on this role")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	d := hostData{Host: h}
	f := c.d.API.Frontier
	if info, err := f.Host(ctx, h); err == nil {
		d.Known, d.Info = true, info
		d.Reason = waitReason(info, c.now())
	} else if !frontier.IsUnknownHost(err) {
		d.Errors = append(d.Errors, err.Error())
	}
	if next, err := f.NextURIs(ctx, h, nextShown); err != nil {
		d.Errors = append(d.Errors, err.Error())
	} else {
		d.Next = next
	}
	if c.robots != nil {
		for _, scheme := range []string{"http", "https"} {
			origin, err := robots.Origin(scheme + "://" + h + "/")
			if err != nil {
				continue
			}
			rc, ok, err := c.robots.Cached(ctx, origin)
			if err != nil {
				d.Errors = append(d.Errors, err.Error())
			} else if ok {
				d.Robots = append(d.Robots, rc)
			}
		}
	}
	if counts, err := c.countHost(h); err != nil {
		d.Errors = append(d.Errors, err.Error())
	} else {
		d.Counts = counts
	}
	c.show(w, r, s, "host", "hosts", "Host "+h, d)
}

// waitReason says in words why a host is not fetched now.
func waitReason(h frontier.HostInfo, now time.Time) string {
	switch {
	case h.Paused:
		return "paused by an operator"
	case !h.BackOffUntil.IsZero() && h.BackOffUntil.After(now) && h.BackOffReason == frontier.BackOffChallenge:
		return "challenged: backing off after " + itoa(h.BackOffs) + " bot-challenge page(s) in a row, until " +
			h.BackOffUntil.UTC().Format(time.RFC3339)
	case !h.BackOffUntil.IsZero() && h.BackOffUntil.After(now):
		return "backing off after " + itoa(h.BackOffs) + " answer(s) in a row with status " + itoa(h.BackOffStatus) +
			" (429 Too Many Requests / 503 Service Unavailable), until " + h.BackOffUntil.UTC().Format(time.RFC3339)
	case h.Queued == 0 && h.InFlight == 0:
		return "exhausted: nothing queued or in flight"
	case h.Queued == 0:
		return "busy: its URIs are in flight"
	case h.NextFetch.After(now):
		return "snoozed: politeness delay until " + h.NextFetch.UTC().Format(time.RFC3339)
	case h.Ready:
		return "ready to be claimed"
	}
	return "busy: its parallel queues are all in flight"
}

func quoteOrEmpty(s string) string {
	if s == "" {
		return "nothing"
	}
	return `"` + s + `"`
}
