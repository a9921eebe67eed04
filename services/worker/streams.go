package worker

import (
	"io"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/extract"
)

// annotationStreamTruncated marks a manifest whose listing a limit cut
// short (extract.streams.maxSegments, the link or byte bounds).
const annotationStreamTruncated = "streamTruncated"

// streamKind says whether a body is an HLS playlist ("hls") or a DASH
// manifest ("dash"): by its media type, or by its URL's extension when
// the server sends a generic type, as many CDNs do for playlists.
func streamKind(mime, url string) string {
	switch mime {
	case "application/vnd.apple.mpegurl", "application/x-mpegurl", "application/mpegurl", "audio/mpegurl", "audio/x-mpegurl":
		return "hls"
	case "application/dash+xml":
		return "dash"
	case "text/plain", "application/octet-stream", "binary/octet-stream", "unknown", "":
		switch p := strings.ToLower(pathOf(url)); {
		case strings.HasSuffix(p, ".m3u8"):
			return "hls"
		case strings.HasSuffix(p, ".mpd"):
			return "dash"
		}
	}
	return ""
}

// extractStream lists a manifest's renditions and segments as the
// profile's extract.streams settings bound them, and counts them.
func (w *Worker) extractStream(t *task, kind string, body io.Reader, opts extract.Options) ([]extract.Link, error) {
	s := t.eff.Profile.Extract.Streams
	o := extract.StreamOptions{Options: opts, Variants: s.Variants, MaxSegments: s.MaxSegments}
	var links []extract.Link
	var info extract.StreamInfo
	var err error
	if kind == "hls" {
		links, info, err = extract.HLS(body, t.l.URL, o)
	} else {
		links, info, err = extract.DASH(body, t.l.URL, o)
	}
	w.metrics.streamSegments.WithLabelValues(kind).Add(float64(info.Segments))
	w.metrics.streamManifests.WithLabelValues(kind).Inc()
	if info.Truncated {
		t.out.notes = append(t.out.notes, annotationStreamTruncated)
	}
	return links, err
}
