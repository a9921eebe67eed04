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

// withDefaults fills the zero fields that have defaults: 20 top hosts, 50
// top targets, a discarding logger.
func (d Deps) withDefaults() Deps {
	if d.TopHosts <= 0 {
		d.TopHosts = 20
	}
	if d.TopTargets <= 0 {
		d.TopTargets = 50
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return d
}

// Handler serves the API; mount it with admin.Server.MountAPI.
func Handler(d Deps) http.Handler {
	d = d.withDefaults()
	h := &handler{d: d, status: NewStatusReader(d)}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/status", h.serveStatus)
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
	d      Deps
	status *StatusReader
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

func (h *handler) serveStatus(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	if h.d.Frontier == nil {
		writeError(w, http.StatusServiceUnavailable, "no frontier to report on")
		return
	}
	st, err := h.status.Read(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, st)
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
	id, err := SendControl(r.Context(), h.d, c)
	if err != nil {
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, ControlAccepted{ID: id, Topic: control.Topic(h.d.Crawl), Command: c.Command})
}

// SendControl produces c with d.Send and logs who sent what, as POST
// /api/v1/control does; the operator console (pkg/console) sends through
// it too. c must be valid (messages.Control.Validate).
func SendControl(ctx context.Context, d Deps, c messages.Control) (string, error) {
	if d.Send == nil {
		return "", errors.New("control commands cannot be sent from this role (no Kafka producer)")
	}
	id, err := d.Send(ctx, c)
	if err != nil {
		return "", fmt.Errorf("send control command: %w", err)
	}
	if d.Logger != nil {
		d.Logger.Info("control command sent", "id", id, "command", c.Command, "scope", c.EffectiveScope(),
			"host", c.Host, "target", c.Target, "urls", len(c.URLs), "surts", len(c.SURTs), "by", c.Who())
	}
	return id, nil
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
