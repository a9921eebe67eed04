package standalone

import (
	"fmt"
	"io"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/services/worker"
)

// A first crawl of a site on localhost used to end at once, archive
// nothing and exit 0, the address guard's reason logged at debug level
// only; an all-bad feed ended the same way (issue 39). The summary now
// says why a run archived nothing when the cause is input that was
// refused or rejected, and NothingArchived gives the command a reason to
// exit non-zero.

// refusalSummary is what the worker's address guard refused in this run.
type refusalSummary struct {
	// Archived counts the captures this run wrote to WARC (responses and
	// revisits; not dns: records).
	Archived int64
	// Refused lists the first hosts the address guard refused in this
	// run, RefusedHosts counts them all; EverySeed says every --seed was
	// among them.
	Refused      []worker.Refusal
	RefusedHosts int64
	EverySeed    bool
}

// refusalsOf reads the worker's refusals for the summary of a run with
// the seeds of cfg.
func refusalsOf(cfg Config, w *worker.Worker) refusalSummary {
	rs := refusalSummary{Archived: w.Archived()}
	rs.Refused, rs.RefusedHosts = w.Refused()
	refused := map[string]bool{}
	for _, r := range rs.Refused {
		refused[r.Host] = true
	}
	rs.EverySeed = len(cfg.Seeds) > 0
	for _, s := range cfg.Seeds {
		if h, err := hostkey.Authority(s); err != nil || !refused[h] {
			rs.EverySeed = false
		}
	}
	return rs
}

// NothingArchived says why the run archived nothing when the reason is
// that everything it was given was refused or rejected: every feed line
// was bad (no valid target, nothing launched), or the address guard
// refused the hosts it met. It is "" when the run archived something,
// when it was interrupted, or when nothing was refused or rejected (a run
// whose seeds are not due again archives nothing too, and that is no
// failure).
func (s *Summary) NothingArchived() string {
	if s.Archived > 0 || s.EndedBy == endedInterrupted {
		return ""
	}
	if f := s.Feed; f != nil && s.Launched == 0 && f.Targets == 0 && (f.BadLines > 0 || f.FeedErrors > 0) {
		return fmt.Sprintf("nothing was launched: every feed line was rejected (%d bad lines, %d feeds unreadable)",
			f.BadLines, f.FeedErrors)
	}
	if s.RefusedHosts == 0 {
		return ""
	}
	hosts := make([]string, len(s.Refused))
	for i, r := range s.Refused {
		hosts[i] = r.Host + " (" + r.Reason + ")"
	}
	list := strings.Join(hosts, ", ")
	if int64(len(s.Refused)) < s.RefusedHosts {
		list += fmt.Sprintf(" and %d more", s.RefusedHosts-int64(len(s.Refused)))
	}
	what := "the address guard refused " + list
	if s.EverySeed {
		what = "every seed was refused by the address guard: " + list
	}
	return "nothing was archived: " + what + "; to crawl loopback, private or link-local addresses, " +
		"set fetch.allowPrivateAddresses=true (--set fetch.allowPrivateAddresses=true, or allowPrivateAddresses: true under fetch: in the profile)"
}

// printHint writes the reason NothingArchived gives, if any.
func (s *Summary) printHint(w io.Writer) {
	if why := s.NothingArchived(); why != "" {
		fmt.Fprintf(w, "  hint:          %s\n", why)
	}
}
