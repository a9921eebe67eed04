package console

import (
	"context"
	"encoding/json"
	"net/http"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/identity"
)

// Live is the overview's numbers, served as /console/live.json for the
// page's script to poll; the rates (URIs/s, bytes/s) are the script's,
// from successive totals.
type Live struct {
	At     time.Time   `json:"at"`
	Status *api.Status `json:"status,omitempty"`
	// Process is what this process's metrics say (not the whole cluster's).
	Process Process `json:"process"`
	// BackingOff are the hosts a 429 or 503 holds back, longest wait
	// first: the sites rate-limiting the crawl.
	BackingOff []frontier.BackOff `json:"backing_off"`
	Workers    []identity.Holder  `json:"workers"`
	Renderers  []identity.Holder  `json:"renderers"`
	// Errors lists the parts that could not be read.
	Errors []string `json:"errors,omitempty"`
}

// Process is this process's own view, from its metrics and its disk; a
// nil field is not known here (a worker has no CDX writer, for one).
type Process struct {
	WARCFiles     *int64 `json:"warc_files,omitempty"`
	WARCOpenFiles *int64 `json:"warc_open_files,omitempty"`
	WARCBytes     *int64 `json:"warc_bytes,omitempty"`
	CDXLag        *int64 `json:"cdx_lag_records,omitempty"`
	DLQ           *int64 `json:"dlq_records,omitempty"`
	DiskFree      *int64 `json:"disk_free_bytes,omitempty"`
	DiskSize      *int64 `json:"disk_size_bytes,omitempty"`
}

// shownBackOffs is how many rate-limited hosts the overview names.
const shownBackOffs = 10

// processMetric says where a metric the overview sums goes; nil for the
// metrics it does not show (this process's).
func processMetric(name string) func(p *Process, v int64) {
	switch name {
	case "trawler_warc_files_closed_total":
		return func(p *Process, v int64) { p.WARCFiles = &v }
	case "trawler_warc_open_files":
		return func(p *Process, v int64) { p.WARCOpenFiles = &v }
	case "trawler_warc_written_bytes_total":
		return func(p *Process, v int64) { p.WARCBytes = &v }
	case "trawler_cdxwriter_lag_records":
		return func(p *Process, v int64) { p.CDXLag = &v }
	case "trawler_kafka_consumer_dlq_records_total":
		return func(p *Process, v int64) { p.DLQ = &v }
	}
	return nil
}

func (c *Console) readLive(ctx context.Context) Live {
	l := Live{At: c.now().UTC(), BackingOff: []frontier.BackOff{}, Workers: []identity.Holder{}, Renderers: []identity.Holder{}}
	if c.d.API.Frontier == nil {
		l.Errors = append(l.Errors, "status: no frontier on this role")
	} else if st, err := c.status.Read(ctx); err != nil {
		l.Errors = append(l.Errors, "status: "+err.Error())
	} else {
		l.Status = st
	}
	if f := c.d.API.Frontier; f != nil {
		bo, err := f.BackingOff(ctx, shownBackOffs)
		if err != nil {
			l.Errors = append(l.Errors, "back-offs: "+err.Error())
		}
		l.BackingOff = bo
	}
	if err := c.readMetrics(&l.Process); err != nil {
		l.Errors = append(l.Errors, "metrics: "+err.Error())
	}
	if dir := c.d.Files.DataDir; dir != "" {
		var fs syscall.Statfs_t
		if err := syscall.Statfs(dir, &fs); err != nil {
			l.Errors = append(l.Errors, "disk: "+err.Error())
		} else {
			free, size := int64(fs.Bavail)*fs.Bsize, int64(fs.Blocks)*fs.Bsize
			l.Process.DiskFree, l.Process.DiskSize = &free, &size
		}
	}
	for _, h := range c.d.InProcess {
		if h.Kind == "renderer" {
			l.Renderers = append(l.Renderers, h)
		} else {
			l.Workers = append(l.Workers, h)
		}
	}
	if c.d.Redis != nil && c.d.API.Frontier != nil {
		// The scopes the roles lease in: the stream's name for workers,
		// with -render for renderers (services/worker, services/renderer).
		name := c.d.API.Frontier.Name()
		for _, x := range []struct {
			scope string
			into  *[]identity.Holder
		}{{name, &l.Workers}, {name + "-render", &l.Renderers}} {
			hs, err := identity.Holders(ctx, c.d.Redis, x.scope)
			if err != nil {
				l.Errors = append(l.Errors, "identities: "+err.Error())
				continue
			}
			*x.into = append(*x.into, hs...)
		}
	}
	return l
}

// readMetrics sums the overview's metrics over their labels.
func (c *Console) readMetrics(p *Process) error {
	if c.d.Gatherer == nil {
		return nil
	}
	mfs, err := c.d.Gatherer.Gather()
	for _, mf := range mfs {
		set := processMetric(mf.GetName())
		if set == nil {
			continue
		}
		var sum float64
		for _, m := range mf.GetMetric() {
			sum += metricValue(m)
		}
		set(p, int64(sum))
	}
	return err
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, s *session) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	c.show(w, r, s, "overview", "overview", "Overview", c.readLive(ctx))
}

func (c *Console) liveJSON(w http.ResponseWriter, r *http.Request, _ *session) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	writeJSON(w, http.StatusOK, c.readLive(ctx))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
