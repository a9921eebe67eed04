package worker

import (
	"sync"
	"time"

	"github.com/trawler-crawl/trawler/internal/lru"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
)

// A seed on a loopback or private address used to end at once (-61, or
// -2 when robots.txt is ignored) with the address guard's reason logged at
// debug level only, so a first crawl of a site on localhost archived
// nothing and said nothing (issue 39). The worker now logs each host the
// guard refuses at WARN, once, with the settings that allow it, and keeps
// the first few for the standalone's summary. Hosts already logged are
// remembered in a bounded LRU, so a crawl that meets millions of private
// addresses costs bounded memory (and may log a host again once it has
// been forgotten).

// AllowPrivateSetting names the profile settings that let the address
// guard fetch the addresses it refuses by default.
const AllowPrivateSetting = "set fetch.allowPrivateAddresses: true in the profile (--set fetch.allowPrivateAddresses=true), " +
	"or list the address range in fetch.allowAddresses"

const (
	// maxRefusedHosts bounds the hosts remembered as logged.
	maxRefusedHosts = 4096
	// maxRefusedListed bounds the refusals kept for Refused.
	maxRefusedListed = 10
)

// Refusal is a host the address guard refused to fetch, and why.
type Refusal struct {
	// Host is the URL's host queue: the host, with its port when not the
	// scheme's default.
	Host string
	// Reason names each refused address and its range, e.g.
	// "127.0.0.1 is loopback".
	Reason string
}

// refusals remembers the hosts the guard refused.
type refusals struct {
	mu     sync.Mutex
	logged *lru.Cache[string, struct{}]
	listed []Refusal
	hosts  int64
}

func newRefusals() *refusals {
	return &refusals{logged: lru.New[string, struct{}](maxRefusedHosts)}
}

// noteRefusal logs a fetch of url the address guard refused (err, the
// fetcher's error) the first time its host is refused; other errors are
// not the guard's and are ignored.
func (w *Worker) noteRefusal(url string, err error) {
	reason, ok := fetch.RefusalReason(err)
	if !ok {
		return
	}
	host, herr := hostkey.Authority(url)
	if herr != nil {
		host = url
	}
	r := w.refused
	r.mu.Lock()
	if _, seen := r.logged.Get(host, time.Time{}); seen {
		r.mu.Unlock()
		return
	}
	r.logged.Put(host, struct{}{}, time.Time{})
	r.hosts++
	if len(r.listed) < maxRefusedListed {
		r.listed = append(r.listed, Refusal{Host: host, Reason: reason})
	}
	r.mu.Unlock()
	w.log.Warn("address guard refused a host: not fetched", "host", host, "url", url, "reason", reason,
		"to_allow", AllowPrivateSetting)
}

// Refused returns the first hosts the address guard refused in this run
// (at most ten) and how many hosts it refused in all.
func (w *Worker) Refused() ([]Refusal, int64) {
	r := w.refused
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Refusal(nil), r.listed...), r.hosts
}
