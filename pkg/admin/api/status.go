package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/trawler-crawl/trawler/internal/costcache"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// StatusReader reads the crawl's status: the body of GET /api/v1/status,
// and what the operator console's overview shows (pkg/console), so the
// two never disagree. Safe for concurrent use.
type StatusReader struct {
	d   Deps
	top *costcache.Cache[[]frontier.HostCount]
}

// NewStatusReader reads the status from d (Frontier, Limits,
// LimitReached, TopHosts, TopTargets, Logger).
func NewStatusReader(d Deps) *StatusReader {
	d = d.withDefaults()
	s := &StatusReader{d: d}
	if d.Frontier != nil {
		// A read of the top hosts scans every host's queue: about 7 s at
		// a million hosts, so one read serves the statuses of the next
		// ten times as long, and a status waits for a new one 2 s at
		// most (internal/costcache).
		s.top = costcache.New(func(ctx context.Context) ([]frontier.HostCount, error) {
			return d.Frontier.TopQueuedHostNames(ctx, d.TopHosts)
		}, costcache.Options{})
	}
	return s
}

// Read reads the status now (the top hosts as last read, see
// Status.TopHosts).
func (h *StatusReader) Read(ctx context.Context) (*Status, error) {
	if h.d.Frontier == nil {
		return nil, errors.New("status: no frontier to report on")
	}
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
