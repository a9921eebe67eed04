package explain

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// Report is the explanation of one URL (the API's JSON).
type Report struct {
	URL        string    `json:"url"`
	Normalized string    `json:"normalized"`
	SURT       string    `json:"surt"`
	Host       string    `json:"host"`
	Via        string    `json:"via,omitempty"`
	Hops       string    `json:"hops,omitempty"`
	At         time.Time `json:"at"`
	// Verdict sums the report up in one sentence.
	Verdict    string      `json:"verdict"`
	Sheets     []Sheet     `json:"sheets"`
	Scope      Scope       `json:"scope"`
	Exclusions []Exclusion `json:"exclusions"`
	Recrawl    Recrawl     `json:"recrawl"`
	Robots     Robots      `json:"robots"`
	Frontier   HostState   `json:"frontier"`
	// URI is where the URL itself is in the frontier: queued (host queue,
	// level, place, due time), held for a paused target, in flight (lease,
	// since when), finished, or none; nil when it could not be read.
	URI *frontier.URIState `json:"uri,omitempty"`
	// Recent is the recently-crawled DB's entry; nil when it has none.
	Recent   *Recent   `json:"recently_crawled,omitempty"`
	Captures []Capture `json:"captures"`
	// Errors lists the parts whose state could not be read.
	Errors []string `json:"errors,omitempty"`
}

func (r *Report) addErr(part string, err error) {
	r.Errors = append(r.Errors, part+": "+err.Error())
}

// Sheet is one sheet association that matches the URL, in the order
// applied (the last wins).
type Sheet struct {
	Prefix  string   `json:"prefix"`
	Name    string   `json:"sheet"`
	Origin  string   `json:"origin"`
	Skipped string   `json:"skipped,omitempty"`
	Ignored []string `json:"ignored,omitempty"`
}

// Scope is the scope decision and every rule's part in it.
type Scope struct {
	Decision    string   `json:"decision"`
	Accepted    bool     `json:"accepted"`
	Rule        int      `json:"rule"`
	RuleName    string   `json:"rule_name"`
	Seed        bool     `json:"judged_as_seed"`
	Annotations []string `json:"annotations,omitempty"`
	Steps       []Step   `json:"steps"`
}

// Step is one rule's answer.
type Step struct {
	Number   int    `json:"number"`
	Rule     string `json:"rule"`
	Decision string `json:"decision"`
	Result   string `json:"result"`
	Skipped  bool   `json:"skipped,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

// Exclusion is an excluded SURT prefix that matches the URL.
type Exclusion struct {
	Prefix string `json:"prefix,omitempty"`
	Source string `json:"source"`
}

// Recrawl says whether the seen filter holds the URL back, and until when.
type Recrawl struct {
	SeenFilter      string     `json:"seen_filter"`
	IntervalSeconds int64      `json:"interval_seconds"`
	LastCrawled     time.Time  `json:"last_crawled,omitzero"`
	DueAt           *time.Time `json:"due_at,omitempty"`
	HeldBack        bool       `json:"held_back"`
	Reason          string     `json:"reason"`
}

// Robots is the robots.txt verdict from the shared cache.
type Robots struct {
	Policy    string `json:"policy"`
	UserAgent string `json:"user_agent"`
	Cached    bool   `json:"cached"`
	Allowed   *bool  `json:"allowed,omitempty"`
	Verdict   string `json:"verdict"`
}

// HostState is the URL's host in the frontier.
type HostState struct {
	Known          bool       `json:"known"`
	Queued         int64      `json:"queued"`
	InFlight       int64      `json:"in_flight"`
	Paused         bool       `json:"paused"`
	Ready          bool       `json:"ready"`
	ParallelQueues int        `json:"parallel_queues,omitempty"`
	NextFetch      *time.Time `json:"next_fetch,omitempty"`
	BackOffUntil   *time.Time `json:"back_off_until,omitempty"`
	BackOffStatus  int        `json:"back_off_status,omitempty"`
	// BackOffReason is the status that asked for the back-off, or
	// "challenge" for a bot-challenge page.
	BackOffReason string `json:"back_off_reason,omitempty"`
	Server        Usage  `json:"server_usage"`
	HostName      Usage  `json:"host_usage"`
	QuotaReached  string `json:"quota_reached,omitempty"`
	Note          string `json:"note,omitempty"`
}

// Usage is a quota subject's counters.
type Usage struct {
	FetchSuccesses int64 `json:"fetch_successes"`
	SuccessBytes   int64 `json:"success_bytes"`
	FetchResponses int64 `json:"fetch_responses"`
	AllBytes       int64 `json:"all_bytes"`
}

func usageOf(u frontier.Usage) Usage {
	return Usage{u.FetchSuccesses, u.SuccessBytes, u.FetchResponses, u.AllBytes}
}

// Recent is the recently-crawled DB's entry.
type Recent struct {
	LastCapture   *RecentCapture `json:"last_capture,omitempty"`
	Original      string         `json:"original_digest,omitempty"`
	OriginalTime  time.Time      `json:"original_time,omitzero"`
	LastFailure   int            `json:"last_failure_status,omitempty"`
	LastFailureAt time.Time      `json:"last_failure_at,omitzero"`
}

// RecentCapture is the latest fetch that got an answer.
type RecentCapture struct {
	Time     time.Time `json:"time"`
	Status   int       `json:"status"`
	Digest   string    `json:"digest,omitempty"`
	Revisit  bool      `json:"revisit,omitempty"`
	Filename string    `json:"filename,omitempty"`
	Offset   int64     `json:"offset,omitempty"`
}

func recentOf(e recentdb.Entry) *Recent {
	if !e.Found() {
		return nil
	}
	r := &Recent{}
	if c := e.Capture; c != nil {
		r.LastCapture = &RecentCapture{Time: c.Time.UTC(), Status: c.Status, Digest: c.Digest, Revisit: c.Revisit,
			Filename: c.Filename, Offset: c.Offset}
	}
	if o := e.Original; o != nil {
		r.Original, r.OriginalTime = o.Digest, o.Time.UTC()
	}
	if f := e.Failure; f != nil {
		r.LastFailure, r.LastFailureAt = f.Status, f.Time.UTC()
	}
	return r
}

// verdict sums the report up, naming the first thing that stops the URL.
func verdict(r *Report) string {
	switch {
	case len(r.Exclusions) > 0 && r.Exclusions[0].Prefix != "":
		return "out of scope: excluded by SURT prefix " + r.Exclusions[0].Prefix
	case len(r.Exclusions) > 0:
		return "out of scope: excluded (" + r.Exclusions[0].Source + ")"
	case !r.Scope.Accepted:
		return "out of scope: " + r.Scope.Decision
	case r.Robots.Allowed != nil && !*r.Robots.Allowed && r.Robots.Policy != "ignore" && r.Robots.Policy != "calculateRobotsOnly":
		return "in scope, but robots.txt disallows it"
	case r.Frontier.QuotaReached != "":
		return "in scope, but the host reached quota " + r.Frontier.QuotaReached
	case r.URI != nil && r.URI.State == frontier.URIInFlight:
		return "in scope; being fetched now"
	case r.URI != nil && r.URI.State == frontier.URIHeld:
		return "in scope; queued, held while its target is paused"
	case r.URI != nil && r.URI.State == frontier.URIQueued && r.Frontier.Paused:
		return "in scope; queued, but its host is paused"
	case r.URI != nil && r.URI.State == frontier.URIQueued:
		return "in scope; queued"
	case r.Recrawl.HeldBack:
		return "in scope; held back by the seen filter: " + r.Recrawl.Reason
	case r.Frontier.Paused:
		return "in scope; its host is paused"
	}
	return "in scope: crawled when found"
}

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	p("url\t%s\n", r.URL)
	if r.Normalized != r.URL {
		p("normalized\t%s\n", r.Normalized)
	}
	p("surt\t%s\nverdict\t%s\n", r.SURT, r.Verdict)
	if len(r.Sheets) == 0 {
		p("sheets\tnone apply\n")
	}
	for i, s := range r.Sheets {
		state := "applied"
		if s.Skipped != "" {
			state = "SKIPPED: " + s.Skipped
		}
		p("%s\t%d. %s at %s (%s): %s\n", label(i, "sheets"), i+1, s.Name, s.Prefix, s.Origin, state)
	}
	p("scope\t%s (judged as seed: %v)\n", r.Scope.Decision, r.Scope.Seed)
	for _, st := range r.Scope.Steps {
		state := st.Result
		if st.Skipped {
			state = "skipped"
		}
		p("\t  #%d %s %s: %s\n", st.Number, st.Rule, st.Decision, state)
	}
	for i, e := range r.Exclusions {
		p("%s\t%s %s\n", label(i, "excluded"), e.Prefix, e.Source)
	}
	p("recrawl\t%s (seen filter %s, interval %ds)\n", r.Recrawl.Reason, r.Recrawl.SeenFilter, r.Recrawl.IntervalSeconds)
	p("robots\t%s (policy %s)\n", r.Robots.Verdict, r.Robots.Policy)
	f := r.Frontier
	if !f.Known {
		p("host\t%s: not in the frontier %s\n", r.Host, f.Note)
	} else {
		p("host\t%s: %d queued, %d in flight, paused %v, %d fetched (%d 2xx)\n", r.Host, f.Queued, f.InFlight, f.Paused,
			f.Server.FetchResponses, f.Server.FetchSuccesses)
		if f.QuotaReached != "" {
			p("\tquota reached: %s\n", f.QuotaReached)
		}
		if f.NextFetch != nil {
			p("\tnext fetch at %s\n", f.NextFetch.Format(time.RFC3339))
		}
	}
	if r.URI != nil {
		p("uri\t%s\n", describeURI(r.URI))
	}
	if c := r.recentCapture(); c != nil {
		p("recent\tlast capture %s status %d %s %s\n", c.Time.Format(time.RFC3339), c.Status, c.Digest, c.Filename)
	}
	if len(r.Captures) == 0 {
		p("captures\tnone in the CDX index\n")
	}
	for i, c := range r.Captures {
		p("%s\t%s %s %s %s %s:%d\n", label(i, "captures"), c.Timestamp, c.Status, c.MimeType, c.Digest, c.Filename, c.Offset)
	}
	for _, e := range r.Errors {
		p("error\t%s\n", e)
	}
	return tw.Flush()
}

func (r *Report) recentCapture() *RecentCapture {
	if r.Recent == nil {
		return nil
	}
	return r.Recent.LastCapture
}

// label shows a section's name on its first line only.
func label(i int, name string) string {
	if i == 0 {
		return name
	}
	return strings.Repeat(" ", len(name))
}

// describeURI says in one line where the URL is in the frontier.
func describeURI(u *frontier.URIState) string {
	var b strings.Builder
	switch u.State {
	case frontier.URIQueued, frontier.URIHeld:
		fmt.Fprintf(&b, "%s in host queue %s, level %d", u.State, u.Host, u.Level)
		if u.Position >= 0 {
			fmt.Fprintf(&b, ", position %d", u.Position)
			if u.State == frontier.URIQueued {
				fmt.Fprintf(&b, " (%d ahead)", u.Ahead)
			}
		}
		if u.Retries > 0 {
			fmt.Fprintf(&b, ", %d retries", u.Retries)
		}
		if !u.Due.IsZero() {
			fmt.Fprintf(&b, ", due %s", u.Due.UTC().Format(time.RFC3339))
		}
		if !u.BackOffUntil.IsZero() {
			fmt.Fprintf(&b, " (host backing off until %s)", u.BackOffUntil.UTC().Format(time.RFC3339))
		}
		if u.State == frontier.URIHeld {
			b.WriteString("; its target is paused")
		}
	case frontier.URIInFlight:
		b.WriteString("in flight")
		if u.Lease != "" {
			fmt.Fprintf(&b, " under lease %q", u.Lease)
		}
		if !u.LeasedAt.IsZero() {
			fmt.Fprintf(&b, " since %s", u.LeasedAt.UTC().Format(time.RFC3339))
		}
		if !u.LeaseExpires.IsZero() {
			fmt.Fprintf(&b, ", lease expires %s", u.LeaseExpires.UTC().Format(time.RFC3339))
		}
		if u.Retries > 0 {
			fmt.Fprintf(&b, ", %d retries", u.Retries)
		}
	case frontier.URIFinished:
		b.WriteString("finished")
		if !u.FinishedAt.IsZero() {
			fmt.Fprintf(&b, " at %s", u.FinishedAt.UTC().Format(time.RFC3339))
		}
		b.WriteString("; neither queued nor in flight")
	default:
		b.WriteString("neither queued nor in flight")
	}
	return b.String()
}
