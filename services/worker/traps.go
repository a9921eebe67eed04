package worker

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/internal/lru"
	"github.com/trawler-crawl/trawler/pkg/extract"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/traps"
)

// trapGuard drops the links of a page that look like a crawler trap's
// (pkg/traps): ever-growing queries at once, and links of the page's own
// pattern once that pattern has admitted its budget of new URLs on the
// host. The budget's counts are the crawl's, in Redis; the patterns this
// worker found trapped are remembered here, so a trapped pattern costs no
// round trip.
type trapGuard struct {
	budget  *traps.Budget
	trapped *lru.Cache[traps.Key, struct{}]
	dropped *prometheus.CounterVec
}

// trappedRemembered bounds the trapped patterns kept, and for how long.
const (
	trappedRemembered   = 10000
	trappedRememberedAt = time.Hour
)

func newTrapGuard(w *Worker) *trapGuard {
	return &trapGuard{budget: traps.NewBudget(w.rdb, w.front.Prefix(), 0), trapped: lru.New[traps.Key, struct{}](trappedRemembered),
		dropped: w.metrics.traps}
}

// pageTraps is one page's view of its links.
type pageTraps struct {
	opts    traps.Options
	host    string
	pattern string
	// selfSimilar marks the links (by index into the admitted children)
	// of the page's own pattern on its host; newOnes counts those
	// admitted as new.
	selfSimilar map[string]bool
	newOnes     int64
	kinds       map[string]int
}

// filter drops t's trap links and returns the rest with what the count
// after admission needs.
func (g *trapGuard) filter(t *task, links []extract.Link) ([]extract.Link, *pageTraps) {
	s := t.eff.Profile.Scope.Traps
	p := &pageTraps{opts: traps.Options{MaxQueryBytes: s.MaxQueryBytes, MaxQueryParams: s.MaxQueryParams,
		MaxRepeatedParam: s.MaxRepeatedParam, MaxPerPattern: s.MaxPerPattern}.WithDefaults()}
	page, err := url.Parse(t.l.URL)
	if err != nil {
		return links, p
	}
	var variable bool
	p.host = page.Host
	p.pattern, variable = traps.Pattern(page)
	now := time.Now()
	_, trapped := g.trapped.Get(traps.Key{Host: p.host, Pattern: p.pattern}, now)
	out := links[:0:0]
	for _, k := range links {
		// Most links need no parse: no query, and a page with nothing
		// that varies has no pattern to repeat.
		if !variable && !strings.ContainsRune(k.URL, '?') {
			out = append(out, k)
			continue
		}
		u, err := url.Parse(k.URL)
		if err != nil {
			out = append(out, k)
			continue
		}
		if p.opts.QueryTrap(u) {
			p.drop(traps.KindQuery)
			continue
		}
		if variable && p.opts.MaxPerPattern > 0 && u.Host == p.host {
			if pat, _ := traps.Pattern(u); pat == p.pattern {
				if trapped {
					p.drop(traps.KindPattern)
					continue
				}
				if p.selfSimilar == nil {
					p.selfSimilar = map[string]bool{}
				}
				p.selfSimilar[k.URL] = true
			}
		}
		out = append(out, k)
	}
	for kind, n := range p.kinds {
		g.dropped.WithLabelValues(kind).Add(float64(n))
		t.out.notes = append(t.out.notes, annotationTrap+kind)
	}
	return out, p
}

func (p *pageTraps) drop(kind string) {
	if p.kinds == nil {
		p.kinds = map[string]int{}
	}
	p.kinds[kind]++
}

// admitted counts a child admitted as new, if it is self-similar.
func (p *pageTraps) admitted(l messages.Launch) {
	if p.selfSimilar[l.URL] {
		p.newOnes++
	}
}

// count adds the page's new self-similar URLs to the crawl's budget and
// remembers the pattern as trapped once it is spent. A failure costs
// only the count (logged): the links were admitted already.
func (w *Worker) countTraps(ctx context.Context, p *pageTraps) {
	if p.newOnes == 0 {
		return
	}
	k := traps.Key{Host: p.host, Pattern: p.pattern}
	over, err := w.traps.budget.Add(ctx, map[traps.Key]int64{k: p.newOnes}, p.opts.MaxPerPattern)
	if err != nil {
		w.log.Warn("count links against the trap budget", "host", p.host, "err", err)
		return
	}
	if len(over) > 0 {
		if _, known := w.traps.trapped.Get(k, time.Now()); !known {
			w.log.Info("crawler trap: a page pattern keeps making new URLs of itself; its further links are dropped",
				"host", p.host, "pattern", p.pattern, "budget", p.opts.MaxPerPattern)
		}
		w.traps.trapped.Put(k, struct{}{}, time.Now().Add(trappedRememberedAt))
	}
}

// annotationTrap prefixes the kind of trap whose links a page lost.
const annotationTrap = "trap:"
