package worker

import (
	"context"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trawler-crawl/trawler/internal/mediafixture"
	"github.com/trawler-crawl/trawler/pkg/extract"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// mediaSite serves a page that plays a progressive MP4, an HLS stream and
// a DASH stream, and the fixture's files with their media types.
func mediaSite(t *testing.T, fx mediafixture.Files) *fcSite {
	t.Helper()
	return fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			fcHTML(w, `<html><body><video src="/progressive.mp4"></video><video src="/hls/master.m3u8"></video>
<video><source src="/dash/stream.mpd" type="application/dash+xml"></video></body></html>`)
		default:
			b, err := os.ReadFile(filepath.Join(fx.Dir, filepath.FromSlash(path.Clean(r.URL.Path))))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", mediafixture.ContentType(r.URL.Path))
			_, _ = w.Write(b)
		}
	})
}

// HLS playlists and DASH manifests lead to the segments of the renditions
// extract.streams.variants chooses, each captured once as a 200 with hop
// E; the renditions not chosen are never requested.
func TestStreamsCaptured(t *testing.T) {
	fx, err := mediafixture.Make(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	all := func(m map[string][]string, keys ...string) []string {
		var out []string
		for _, k := range keys {
			out = append(out, m[k]...)
		}
		return out
	}
	cases := []struct {
		variants       string
		want, notWant  []string
		hlsSegs, dSegs float64
	}{
		// Two HLS variants: the extremes are both; of three DASH
		// representations the middle one is left.
		{extract.VariantsExtremes, append(all(fx.HLS, "v0", "v1"), all(fx.DASH, "lo", "hi")...), fx.DASH["mid"],
			float64(len(fx.HLS["v0"]) - 1 + len(fx.HLS["v1"]) - 1), 2 * mediafixture.DASHSegments},
		{extract.VariantsLowest, append(all(fx.HLS, "v1"), all(fx.DASH, "lo")...), append(all(fx.HLS, "v0"), all(fx.DASH, "mid", "hi")...),
			float64(len(fx.HLS["v1"]) - 1), mediafixture.DASHSegments},
		{extract.VariantsNone, nil, append(all(fx.HLS, "v0", "v1"), all(fx.DASH, "lo", "mid", "hi")...), 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.variants, func(t *testing.T) {
			e := setup(t)
			site := mediaSite(t, fx)
			p := fcProfile()
			p.Extract.Streams.Variants = tc.variants
			var hlsSegs, dashSegs float64
			events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("media.test"), seeds: []string{site.url("media.test", "/")},
				minURIs: 4, after: func(w *Worker) {
					hlsSegs = testutil.ToFloat64(w.metrics.streamSegments.WithLabelValues("hls"))
					dashSegs = testutil.ToFloat64(w.metrics.streamSegments.WithLabelValues("dash"))
				}})
			want := append([]string{fx.Progressive, fx.HLSMaster, fx.DASHManifest}, tc.want...)
			for _, f := range want {
				ev := fcOne(t, events, site.url("media.test", "/"+f))
				if ev.StatusCode != 200 || ev.WarcFilename == nil || ev.HopPath == "" || ev.HopPath[len(ev.HopPath)-1] != messages.HopEmbed {
					t.Errorf("%s: status %d hops %q warc %v, want a 200 capture reached by an embed", f, ev.StatusCode, ev.HopPath, ev.WarcFilename)
				}
			}
			for _, f := range tc.notWant {
				if n := site.hitCount("/" + f); n != 0 || len(events[site.url("media.test", "/"+f)]) != 0 {
					t.Errorf("%s: requested %d times by a crawl choosing %s", f, n, tc.variants)
				}
			}
			if hlsSegs != tc.hlsSegs || dashSegs != tc.dSegs {
				t.Errorf("segments listed: hls %v dash %v, want %v and %v", hlsSegs, dashSegs, tc.hlsSegs, tc.dSegs)
			}
			if tc.variants == extract.VariantsExtremes && !slices.Contains(tc.want, fx.HLS["v1"][1]) {
				t.Fatal("fixture: the low variant's first segment is not among the wanted files")
			}
		})
	}
}

func TestStreamKind(t *testing.T) {
	for _, c := range []struct{ mime, url, want string }{
		{"application/vnd.apple.mpegurl", "http://a/x", "hls"},
		{"audio/x-mpegurl", "http://a/x.m3u", "hls"},
		{"application/dash+xml", "http://a/x", "dash"},
		{"text/plain", "http://a/live/INDEX.M3U8?token=1", "hls"},
		{"application/octet-stream", "http://a/v.mpd", "dash"},
		{"text/html", "http://a/v.m3u8", ""},
		{"video/mp2t", "http://a/seg.ts", ""},
	} {
		if got := streamKind(c.mime, c.url); got != c.want {
			t.Errorf("streamKind(%q, %q) = %q, want %q", c.mime, c.url, got, c.want)
		}
	}
}
