package console

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// action is a command sent from this console.
type action struct {
	ID      string
	Command string
	What    string
	By      string
	At      time.Time
}

// recentActions keeps the last commands sent, newest first, for the
// control page; the acknowledgements themselves are in Redis.
type recentActions struct {
	max int

	mu   sync.Mutex
	list []action
}

func newRecentActions(n int) *recentActions { return &recentActions{max: n} }

func (ra *recentActions) add(a action) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	ra.list = append([]action{a}, ra.list...)
	if len(ra.list) > ra.max {
		ra.list = ra.list[:ra.max]
	}
}

func (ra *recentActions) all() []action {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	return append([]action(nil), ra.list...)
}

func (ra *recentActions) find(id string) *action {
	for _, a := range ra.all() {
		if a.ID == id {
			return &a
		}
	}
	return nil
}

// controlData is the control page.
type controlData struct {
	Recent []action
	Error  string
	// Form echoes a refused form back.
	Form map[string]string
}

func (c *Console) controlPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.show(w, r, s, "control", "control", "Control", controlData{Recent: c.recent.all()})
}

// destructive commands need the form's confirm box ticked: the server
// checks it, so it holds without JavaScript.
func destructive(m messages.Control) bool {
	return m.Command == messages.CommandTerminate || m.Command == messages.CommandDelete ||
		m.Command == messages.CommandExclusions && m.Action != messages.ActionRemove
}

// control sends the form's command as the session's actor and shows its
// acknowledgement page.
func (c *Console) control(w http.ResponseWriter, r *http.Request, s *session) {
	m := controlOf(r)
	m.By = s.actor()
	refuse := func(status int, msg string) {
		form := map[string]string{}
		for k := range r.PostForm {
			if k != "csrf" {
				form[k] = r.PostForm.Get(k)
			}
		}
		c.render(w, r, status, "control", page{Title: "Control", Nav: "control", Actor: s.actor(), CanAct: s.canAct(),
			CSRF: s.csrf, Data: controlData{Recent: c.recent.all(), Error: msg, Form: form}})
	}
	if f := r.PostForm; f.Get("command") == messages.CommandSeeds && f.Get("action") == messages.ActionRemove && len(lines(f.Get("urls"), false)) > 1 {
		refuse(http.StatusBadRequest, "not sent: remove one seed at a time (each is its own target, with its own acknowledgement)")
		return
	}
	if err := m.Validate(); err != nil {
		refuse(http.StatusBadRequest, "not sent: "+err.Error())
		return
	}
	if destructive(m) && r.PostForm.Get("confirm") != "yes" {
		refuse(http.StatusBadRequest, "not sent: "+m.Command+" needs its confirm box ticked")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	id, err := api.SendControl(ctx, c.d.API, m)
	if err != nil {
		refuse(http.StatusBadGateway, err.Error())
		return
	}
	c.log.Info("console: control command sent", "id", id, "command", m.Command, "scope", m.EffectiveScope(), "by", m.By, "remote", r.RemoteAddr)
	c.recent.add(action{ID: id, Command: m.Command, What: describe(m), By: m.By, At: c.now().UTC()})
	http.Redirect(w, r, Prefix+"ack?id="+id, http.StatusSeeOther)
}

// controlOf reads a control form: one line (or comma) per list item.
func controlOf(r *http.Request) messages.Control {
	f := r.PostForm
	m := messages.Control{Command: strings.TrimSpace(f.Get("command")), Scope: strings.TrimSpace(f.Get("scope")),
		Host: strings.TrimSpace(f.Get("host")), Source: strings.TrimSpace(f.Get("source")),
		Stream: strings.TrimSpace(f.Get("stream")), Action: strings.TrimSpace(f.Get("action")),
		URLs: lines(f.Get("urls"), false), SURTs: lines(f.Get("surts"), false), Sheets: lines(f.Get("sheets"), true),
		Regex: strings.TrimSpace(f.Get("regex"))}
	if m.Scope == messages.ScopeCrawl {
		m.Scope = "" // the default, which every version reads
	}
	if m.Command == messages.CommandSeeds && m.Action == messages.ActionRemove {
		return removeSeed(m)
	}
	return m
}

// removeSeed is the seeds form's remove: a seed added from the console
// or by ctl is launched as its own target (its source tag is its URL), so
// removing it terminates that target: its queued URIs finish -6000 and
// none is admitted again. A seed from a crawl feed goes when its target
// leaves the feed (or by terminating the feed's target tag). One seed a
// command, so each gets its own acknowledgement (control refuses more).
func removeSeed(m messages.Control) messages.Control {
	out := messages.Control{Command: messages.CommandTerminate, Scope: messages.ScopeTarget}
	if len(m.URLs) > 0 {
		out.Source = m.URLs[0]
	}
	return out
}

// lines splits a textarea into its non-empty lines, and on commas too
// when commas says so (sheet names hold none; URLs may).
func lines(s string, commas bool) []string {
	var out []string
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || commas && r == ',' }) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// describe says what a command applies to, for the recent list.
func describe(m messages.Control) string {
	var parts []string
	switch m.EffectiveScope() {
	case messages.ScopeHost:
		parts = append(parts, "host "+m.Host)
	case messages.ScopeTarget:
		parts = append(parts, "target "+m.Source)
	case messages.ScopeStream:
		parts = append(parts, "stream "+m.Stream)
	default:
		if m.Command == messages.CommandPause || m.Command == messages.CommandResume || m.Command == messages.CommandTerminate {
			parts = append(parts, "the crawl")
		}
	}
	if m.Action != "" {
		parts = append(parts, m.Action)
	}
	parts = append(parts, m.URLs...)
	parts = append(parts, m.SURTs...)
	if len(m.Sheets) > 0 {
		parts = append(parts, "sheets "+strings.Join(m.Sheets, ", "))
	}
	if m.Regex != "" {
		parts = append(parts, "matching "+m.Regex)
	}
	return strings.Join(parts, " ")
}

// ackData is a command's acknowledgement page.
type ackData struct {
	ID     string
	Action *action
	Ack    *api.Ack
	Error  string
}

func (c *Console) readAck(ctx context.Context, id string) ackData {
	d := ackData{ID: id, Action: c.recent.find(id)}
	if c.d.API.Acks == nil {
		d.Error = "acknowledgements cannot be read from this role"
		return d
	}
	a, err := c.d.API.Acks(ctx, id)
	if err != nil {
		d.Error = err.Error()
	}
	d.Ack = a
	return d
}

func (c *Console) ackPage(w http.ResponseWriter, r *http.Request, s *session) {
	id := strings.TrimSpace(r.URL.Query().Get("id"))
	if id == "" {
		c.fail(w, r, s, http.StatusBadRequest, "ack: want ?id=<command id>")
		return
	}
	c.show(w, r, s, "ack", "control", "Command "+id, c.readAck(r.Context(), id))
}

func (c *Console) ackJSON(w http.ResponseWriter, r *http.Request, _ *session) {
	id := strings.TrimSpace(r.URL.Query().Get("id"))
	if id == "" {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: "want ?id=<command id>"})
		return
	}
	writeJSON(w, http.StatusOK, c.readAck(r.Context(), id))
}
