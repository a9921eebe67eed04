package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/harveststats"
)

// HarvestStats reads per-launch harvest statistics (the provenance role
// keeps them in Redis); *harveststats.Store satisfies it.
type HarvestStats interface {
	Launches(ctx context.Context) (map[harveststats.Launch]string, error)
	Stats(ctx context.Context, l harveststats.Launch) (harveststats.LaunchStats, error)
}

// LaunchState is one launch in the /harveststats listing.
type LaunchState struct {
	harveststats.Launch
	State string `json:"state"`
}

// harvestStats serves /api/v1/harveststats: every launch with its state,
// or with ?source= (and ?launch=, the 14-digit timestamp) one launch's
// statistics by domain with their stop reasons.
func (h *handler) harvestStats(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	if h.d.HarvestStats == nil {
		writeError(w, http.StatusServiceUnavailable, "harvest statistics are not available on this role")
		return
	}
	q := r.URL.Query()
	if src := strings.TrimSpace(q.Get("source")); src != "" {
		st, err := h.d.HarvestStats.Stats(r.Context(), harveststats.Launch{Source: src, Timestamp: q.Get("launch")})
		switch {
		case errors.Is(err, harveststats.ErrUnknownLaunch):
			writeError(w, http.StatusNotFound, err.Error())
		case err != nil:
			writeError(w, http.StatusServiceUnavailable, err.Error())
		default:
			writeJSON(w, http.StatusOK, st)
		}
		return
	}
	ls, err := h.d.HarvestStats.Launches(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	out := make([]LaunchState, 0, len(ls))
	for l, st := range ls {
		out = append(out, LaunchState{Launch: l, State: st})
	}
	slices.SortFunc(out, func(a, b LaunchState) int {
		return strings.Compare(a.Timestamp+" "+a.Source, b.Timestamp+" "+b.Source)
	})
	writeJSON(w, http.StatusOK, out)
}
