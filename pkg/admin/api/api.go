// Package api is the admin JSON API a worker (and standalone) serves under
// /api/v1/ on its admin listener, behind the bearer token that
// admin.Server.MountAPI checks:
//
//	GET  /api/v1/status         the frontier's counts, top hosts and targets, crawl limits
//	POST /api/v1/control        a control command, produced to <crawl>.control
//	GET  /api/v1/control/<id>   the workers' acknowledgement of a command
//	GET  /api/v1/explain?url=   one URL explained end to end (pkg/explain)
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/internal/costcache"
	"github.com/trawler-crawl/trawler/pkg/control"
	"github.com/trawler-crawl/trawler/pkg/explain"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// SendFunc produces a control command and returns its id.
type SendFunc func(ctx context.Context, c messages.Control) (id string, err error)

// AckFunc reads a command's acknowledgement; nil, nil while there is none.
type AckFunc func(ctx context.Context, id string) (*Ack, error)

// Deps are what the API reads and drives.
type Deps struct {
	// Crawl names the crawl (fc, dc): the control topic is <crawl>.control.
	Crawl string
	// Frontier is the crawl stream's frontier.
	Frontier *frontier.Frontier
	// Limits are the profile's crawl limits.
	Limits profile.Limits
	// LimitReached, when set, reports the limit this process's worker
	// stopped at (sticky, even after totals change); "" while none has.
	LimitReached func() string
	// Explainer answers /explain; nil answers 503.
	Explainer *explain.Explainer
	// Send produces control commands; nil answers 503.
	Send SendFunc
	// Acks reads acknowledgements; nil answers 503.
	Acks AckFunc
	// TopHosts is how many hosts /status lists by queued URIs; 0: 20.
	TopHosts int
	// TopTargets is how many targets /status lists by URIs queued and in
	// flight; 0: 50.
	TopTargets int
	// HarvestStats answers /harveststats; nil answers 503.
	HarvestStats HarvestStats
	// Logger records control commands sent; nil discards.
	Logger *slog.Logger
}

// Handler serves the API; mount it with admin.Server.MountAPI.
func Handler(d Deps) http.Handler {
	if d.TopHosts <= 0 {
		d.TopHosts = 20
	}
	if d.TopTargets <= 0 {
		d.TopTargets = 50
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{d: d}
	if d.Frontier != nil {
		// A read of the top hosts scans every host's queue: about 7 s at
		// a million hosts, so one read serves the statuses of the next
		// ten times as long, and a status waits for a new one 2 s at
		// most (internal/costcache).
		h.top = costcache.New(func(ctx context.Context) ([]frontier.HostCount, error) {
			return d.Frontier.TopQueuedHostNames(ctx, d.TopHosts)
		}, costcache.Options{})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/status", h.status)
	mux.HandleFunc("/api/v1/control", h.control)
	mux.HandleFunc("/api/v1/control/{id}", h.ack)
	mux.HandleFunc("/api/v1/explain", h.explain)
	mux.HandleFunc("/api/v1/harveststats", h.harvestStats)
	mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no API endpoint %s (status, control, explain, harveststats)", r.URL.Path))
	})
	return mux
}

type handler struct {
	d   Deps
	top *costcache.Cache[[]frontier.HostCount]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// Error is the body of every non-2xx API answer.
type Error struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, Error{Error: msg})
}

func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method != method {
		w.Header().Set("Allow", method)
		writeError(w, http.StatusMethodNotAllowed, r.URL.Path+" takes "+method)
		return false
	}
	return true
}

// Status is the body of GET /api/v1/status.
type Status struct {
	Crawl    string    `json:"crawl"`
	Frontier string    `json:"frontier"`
	At       time.Time `json:"at"`
	Queued   int64     `json:"queued"`
	InFlight int64     `json:"in_flight"`
	Paused   bool      `json:"paused"`
	// Held counts the queued URIs (in Queued) set aside while their
	// target is paused.
	Held   int64  `json:"held"`
	Hosts  Hosts  `json:"hosts"`
	Retry  Retry  `json:"retry"`
	Totals Totals `json:"totals"`
	// TopHosts are the host names with most URIs queued (all ports), as
	// they were at TopHostsAt: the list is read at most every few
	// seconds (more rarely for a frontier of millions of hosts, whose
	// read takes a while), and a status does not wait long for a new
	// one. TopHostsAt is absent while the first read is under way.
	TopHosts   []HostCount `json:"top_hosts"`
	TopHostsAt *time.Time  `json:"top_hosts_at,omitempty"`
	// Targets are the targets (source tags) with most URIs queued (held
	// ones included) and in flight, counted by the frontier as it queues,
	// claims and finishes them; TargetsTotal counts them all.
	Targets      []frontier.TargetCount `json:"targets"`
	TargetsTotal int                    `json:"targets_total"`
	Limits       Limits                 `json:"limits"`
}

// Hosts counts the frontier's hosts by state.
type Hosts struct {
	Total      int64 `json:"total"`
	Ready      int64 `json:"ready"`
	Snoozed    int64 `json:"snoozed"`
	Busy       int64 `json:"busy"`
	Exhausted  int64 `json:"exhausted"`
	Paused     int64 `json:"paused"`
	BackingOff int64 `json:"backing_off"`
}

// Retry counts what waits for a retry delay.
type Retry struct {
	Hosts int64      `json:"hosts"`
	URIs  int64      `json:"uris"`
	Next  *time.Time `json:"next,omitempty"`
}

// Totals are the crawl-wide finished counts.
type Totals struct {
	URIs       int64            `json:"uris"`
	Bytes      int64            `json:"bytes"`
	Downloaded int64            `json:"downloaded"`
	Novel      int64            `json:"novel"`
	NovelBytes int64            `json:"novel_bytes"`
	Retries    int64            `json:"retries"`
	ByStatus   map[string]int64 `json:"by_status"`
}

// HostCount is one host name's queued URIs.
type HostCount struct {
	Host   string `json:"host"`
	Queued int64  `json:"queued"`
}

// Limits are the crawl limits (0: none), the crawl's elapsed time and the
// limit reached, if any.
type Limits struct {
	MaxDocumentsDownload int64   `json:"maxDocumentsDownload"`
	MaxBytesDownload     int64   `json:"maxBytesDownload"`
	MaxNovelUrls         int64   `json:"maxNovelUrls"`
	MaxNovelBytes        int64   `json:"maxNovelBytes"`
	MaxTimeSeconds       int64   `json:"maxTimeSeconds"`
	ElapsedSeconds       float64 `json:"elapsed_seconds"`
	Reached              string  `json:"reached,omitempty"`
}

func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	if h.d.Frontier == nil {
		writeError(w, http.StatusServiceUnavailable, "no frontier to report on")
		return
	}
	st, err := h.readStatus(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (h *handler) readStatus(ctx context.Context) (*Status, error) {
	f := h.d.Frontier
	s, err := f.Stats(ctx)
	if err != nil {
		return nil, err
	}
	t, err := f.Totals(ctx)
	if err != nil {
		return nil, err
	}
	top, topAt, err := h.top.Get(ctx)
	if err != nil && topAt.IsZero() {
		return nil, err
	}
	if err != nil {
		h.d.Logger.Warn("status: the top hosts could not be read; showing the last list", "read_at", topAt, "err", err)
	}
	targets, err := f.TargetCounts(ctx)
	if err != nil {
		return nil, err
	}
	st := &Status{Crawl: h.d.Crawl, Frontier: f.Name(), At: time.Now().UTC(), Queued: s.Queued, InFlight: s.InFlight,
		Paused: s.Paused, Held: s.Held, Targets: targets[:min(len(targets), h.d.TopTargets)], TargetsTotal: len(targets),
		Hosts: Hosts{Total: s.Hosts, Ready: s.ReadyHosts, Snoozed: s.SnoozedHosts, Busy: s.BusyHosts,
			Exhausted: s.ExhaustedHosts, Paused: s.PausedHosts, BackingOff: s.BackingOffHosts},
		Retry: Retry{Hosts: s.RetryHosts, URIs: s.RetryURIs},
		Totals: Totals{URIs: t.URIs, Bytes: t.Bytes, Downloaded: t.Downloaded, Novel: t.Novel, NovelBytes: t.NovelBytes,
			Retries: t.Retries, ByStatus: map[string]int64{}},
	}
	if !s.NextRetry.IsZero() {
		n := s.NextRetry.UTC()
		st.Retry.Next = &n
	}
	for code, n := range t.ByStatus {
		st.Totals.ByStatus[fmt.Sprint(code)] = n
	}
	for _, c := range top {
		st.TopHosts = append(st.TopHosts, HostCount{c.Host, c.Queued})
	}
	if !topAt.IsZero() {
		at := topAt.UTC()
		st.TopHostsAt = &at
	}
	l := h.d.Limits
	st.Limits = Limits{MaxDocumentsDownload: l.MaxDocumentsDownload, MaxBytesDownload: l.MaxBytesDownload,
		MaxNovelUrls: l.MaxNovelUrls, MaxNovelBytes: l.MaxNovelBytes, MaxTimeSeconds: l.MaxTimeSeconds}
	var elapsed time.Duration
	if start, err := f.CrawlStart(ctx); err == nil && !start.IsZero() {
		elapsed = time.Since(start)
		st.Limits.ElapsedSeconds = elapsed.Round(time.Millisecond).Seconds()
	}
	if h.d.LimitReached != nil {
		st.Limits.Reached = h.d.LimitReached()
	}
	if st.Limits.Reached == "" && l != (profile.Limits{}) {
		st.Limits.Reached = frontier.LimitReached(l, t, elapsed)
	}
	return st, nil
}

// maxControlBytes bounds a control command's body; seed lists are the
// long ones.
const maxControlBytes = 4 << 20

// ControlAccepted is the body of a 202 from POST /api/v1/control.
type ControlAccepted struct {
	ID      string `json:"id"`
	Topic   string `json:"topic"`
	Command string `json:"command"`
}

func (h *handler) control(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) {
		return
	}
	if h.d.Send == nil {
		writeError(w, http.StatusServiceUnavailable, "control commands cannot be sent from this role (no Kafka producer)")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxControlBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, "read control command: "+err.Error())
		return
	}
	c, err := messages.DecodeControl(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if c.By == "" && c.IssuedBy == "" {
		c.By = "admin-api"
	}
	id, err := h.d.Send(r.Context(), c)
	if err != nil {
		writeError(w, http.StatusBadGateway, "send control command: "+err.Error())
		return
	}
	h.d.Logger.Info("control command sent", "id", id, "command", c.Command, "scope", c.EffectiveScope(),
		"target", c.Target, "urls", len(c.URLs), "surts", len(c.SURTs), "by", c.Who())
	writeJSON(w, http.StatusAccepted, ControlAccepted{ID: id, Topic: control.Topic(h.d.Crawl), Command: c.Command})
}

func (h *handler) ack(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	if h.d.Acks == nil {
		writeError(w, http.StatusServiceUnavailable, "acknowledgements cannot be read from this role")
		return
	}
	id := r.PathValue("id")
	a, err := h.d.Acks(r.Context(), id)
	switch {
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err.Error())
	case a == nil:
		writeError(w, http.StatusNotFound, "command "+id+" not acknowledged (not applied yet, unknown, or expired)")
	default:
		writeJSON(w, http.StatusOK, a)
	}
}

func (h *handler) explain(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	if h.d.Explainer == nil {
		writeError(w, http.StatusServiceUnavailable, "explain is not available on this role")
		return
	}
	q := r.URL.Query()
	u := strings.TrimSpace(q.Get("url"))
	if u == "" {
		writeError(w, http.StatusBadRequest, "missing url parameter: /api/v1/explain?url=https://…")
		return
	}
	rep, err := h.d.Explainer.Explain(r.Context(), explain.Request{URL: u, Via: q.Get("via"), Hops: q.Get("hops")})
	switch {
	case errors.Is(err, explain.ErrBadURL):
		writeError(w, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
