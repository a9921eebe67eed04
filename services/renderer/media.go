package renderer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/browser"
	"github.com/trawler-crawl/trawler/pkg/media"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// mediaMetrics count the renderer's media work.
type mediaMetrics struct {
	// available is 1 when yt-dlp was found at start.
	available prometheus.Gauge
	// runs counts yt-dlp runs by result: ok, failed, timeout, and
	// not_installed for pages that would have run it.
	runs *prometheus.CounterVec
	// widened counts browser Range requests fetched whole.
	widened prometheus.Counter
}

func newMediaMetrics() mediaMetrics {
	m := mediaMetrics{
		available: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "trawler_renderer_ytdlp_available", Help: "1 when the renderer found yt-dlp at start, 0 when media pages are rendered without it.",
		}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_renderer_ytdlp_runs_total", Help: "yt-dlp runs on rendered pages by result: ok, failed, timeout, not_installed.",
		}, []string{"result"}),
		widened: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_renderer_range_requests_widened_total",
			Help: "Browser Range requests fetched and recorded whole (a 206 does not replay; the 200 does).",
		}),
	}
	for _, r := range []string{"ok", "failed", "timeout", "not_installed"} {
		m.runs.WithLabelValues(r)
	}
	return m
}

// findYtDlp looks for yt-dlp once, at start; its absence is said once.
func (r *Renderer) findYtDlp() {
	exe, err := media.Find(r.cfg.YtDlp)
	if err != nil {
		r.log.Warn("yt-dlp not found: media on rendered pages is captured by the browser only (install Debian's yt-dlp package, or give --yt-dlp)",
			"err", err)
		r.metrics.media.available.Set(0)
		return
	}
	r.ytdlp = exe
	r.metrics.media.available.Set(1)
}

// isMediaResponse says whether a response is audio, video or a stream
// manifest: what makes a page one "where the browser saw media".
func isMediaResponse(mime string) bool {
	return strings.HasPrefix(mime, "video/") || strings.HasPrefix(mime, "audio/") ||
		strings.Contains(mime, "mpegurl") || mime == "application/dash+xml"
}

// noteMedia records that the page loaded audio, video or a manifest.
func (s *session) noteMedia(mime string) {
	if !isMediaResponse(mime) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sawMedia = true
}

// wholeRequest drops a browser's Range (and If-Range) so the resource is
// fetched and recorded whole and the browser gets the 200. Browsertrix
// records a media request's 206 and fetches the resource again in full;
// fetching it whole at once costs the site one request instead of two and
// keeps 206 records out of the archive, where replay (which answers a
// player's Range by slicing a 200 record: pywb's rewriterapp.py
// _add_range) would find them closest to the page and could not use them.
// It reports whether there was a Range to drop.
func wholeRequest(h http.Header) bool {
	if h.Get("Range") == "" {
		return false
	}
	h.Del("Range")
	h.Del("If-Range")
	return true
}

// runYtDlp runs yt-dlp on the page through its recording proxy when the
// page's sheets ask for it; the JSON it returns becomes the page's
// youtube-dl: metadata record. Failures are logged and counted, never
// fatal to the render.
func (r *Renderer) runYtDlp(ctx context.Context, s *session, res *browser.Result, proxy string) []byte {
	m := s.eff.Profile.Render.Media
	switch {
	case m.YtDlp == profile.YtDlpOff:
		return nil
	case m.YtDlp == profile.YtDlpMedia && res.MediaElements == 0 && !s.seenMedia():
		return nil
	case r.ytdlp == "":
		r.metrics.media.runs.WithLabelValues("not_installed").Inc()
		return nil
	}
	timeout := time.Duration(m.YtDlpTimeoutSeconds) * time.Second
	out, err := media.Run(ctx, r.ytdlp, media.Request{PageURL: s.l.URL, Proxy: proxy, Timeout: timeout,
		MaxBytes: m.YtDlpMaxBytes, MaxItems: m.YtDlpMaxItems})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		r.metrics.media.runs.WithLabelValues("timeout").Inc()
		r.log.Warn("yt-dlp timed out; keeping what it described", "page", s.l.URL, "timeout", timeout, "items", out.Items)
	case err != nil:
		r.metrics.media.runs.WithLabelValues("failed").Inc()
		r.log.Info("yt-dlp found no media it could fetch", "page", s.l.URL, "err", err)
	default:
		r.metrics.media.runs.WithLabelValues("ok").Inc()
	}
	return out.Info
}

func (s *session) seenMedia() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sawMedia
}

// mediaRecord writes yt-dlp's JSON as the metadata record
// youtube-dl:<page>, as brozzler and Heritrix's ExtractorYoutubeDL do.
func (r *Renderer) mediaRecord(ctx context.Context, s *session, info []byte) (string, error) {
	target := "youtube-dl:" + s.l.URL
	loc, err := r.warc.WriteResource(ctx, warcwriter.Resource{URL: target, Date: time.Now(), ContentType: media.ContentType,
		Block: info, Metadata: true})
	if err != nil {
		r.metrics.warcErrors.Inc()
		return "", fmt.Errorf("write %s: %w", target, err)
	}
	return fmt.Sprintf("%s:%d", loc.Filename, loc.Offset), nil
}
