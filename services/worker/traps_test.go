package worker

import (
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// The synthetic web's endless calendar, crawled with a hop limit far
// beyond it, is contained by the pattern budget alone: month pages make
// new months of their own pattern and day pages new days, so each chain
// stops once its pattern has admitted maxPerPattern new URLs; the days a
// month page lists are not of its pattern and are kept. The bound, with
// T crawl threads each finishing at most one page beyond the budget:
// months found from months <= 1 + max + 2T (a month links two), days <=
// 31 per month + max + 2T. A day page links its month, which is not of
// its pattern: the last day of a month links the first of the next, a
// new day counted against the days' budget, whose page links a month
// that may be new. So months found from days <= max + 2T, the days'
// budget (a loaded CI machine once crawled 22 months where the month
// chain alone allows 21). The pages that lost links are annotated
// trap:pattern and the links counted.
func TestTrapsContainTheCalendar(t *testing.T) {
	const max, threads = 12, 4
	e := hostileSetup(t)
	p := hostileProfile()
	p.Scope.MaxHops = 60
	p.Scope.Traps.MaxPerPattern = max
	// The entry month's seed-implied scope is its year; a second seed for
	// the calendar's directory puts every year in scope.
	entry := e.srv.HostileURL(testweb.PathCalendar)
	dir := e.srv.HostileURL("/calendar/")
	var dropped float64
	events := e.crawl(t, crawlRun{p: p, resolver: e.srv.Resolver(), seeds: []string{dir, entry}, minURIs: 20,
		after: func(w *Worker) { dropped = testutil.ToFloat64(w.metrics.traps.WithLabelValues("pattern")) }})
	var months, monthsFromDays, days, annotated int
	depth := func(raw string) int {
		u, err := url.Parse(raw)
		if err != nil || !strings.HasPrefix(u.Path, "/calendar/") {
			return 0
		}
		return strings.Count(u.Path, "/")
	}
	for raw, evs := range events {
		switch depth(raw) {
		case 3:
			months++
			if len(evs) > 0 && depth(evs[0].Via) == 4 {
				monthsFromDays++
			}
		case 4:
			days++
		}
		for _, ev := range evs {
			if fcHasNote(ev, "trap:pattern") {
				annotated++
			}
		}
	}
	t.Logf("calendar: %d months (%d found from days), %d days crawled; %d pages annotated trap:pattern, %v links dropped",
		months, monthsFromDays, days, annotated, dropped)
	if months-monthsFromDays > 1+max+2*threads || monthsFromDays > max+2*threads || days > 31*months+max+2*threads {
		t.Errorf("%d months (%d from days) and %d days: the calendar was not contained (bound %d months from months, %d from days, %d days)",
			months, monthsFromDays, days, 1+max+2*threads, max+2*threads, 31*months+max+2*threads)
	}
	if months <= max || annotated == 0 || dropped == 0 {
		t.Errorf("%d months, %d pages annotated, %v links dropped: the budget was never spent, so nothing was shown", months, annotated, dropped)
	}
}
