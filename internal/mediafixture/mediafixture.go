// Package mediafixture makes the media the stream and renderer tests crawl:
// a short progressive MP4 and an HLS stream with two variants, both made
// by Debian's ffmpeg (scripts/install-test-deps.sh installs it), and a
// DASH manifest written by hand with three representations.
package mediafixture

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Files lists a fixture's files by their paths relative to its directory
// (slash-separated, as a server serves them).
type Files struct {
	Dir string
	// Progressive is the MP4 file.
	Progressive string
	// HLSMaster is the master playlist; HLS the variant playlists and
	// segments of each variant, by variant ("v0" high, "v1" low).
	HLSMaster string
	HLS       map[string][]string
	// DASHManifest is the MPD; DASH the init and media segments of each
	// representation by its id ("lo", "mid", "hi").
	DASHManifest string
	DASH         map[string][]string
}

// DASHSegments is how many media segments each DASH representation has.
const DASHSegments = 4

// Make writes the fixture into dir. It fails when ffmpeg is missing or
// fails, with what it printed.
func Make(ctx context.Context, dir string) (Files, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	f := Files{Dir: dir, Progressive: "progressive.mp4", HLSMaster: "hls/master.m3u8", DASHManifest: "dash/stream.mpd"}
	if err := os.MkdirAll(filepath.Join(dir, "hls"), 0o755); err != nil {
		return f, fmt.Errorf("media fixture: %w", err)
	}
	// Four seconds at 10 frames a second with a key frame every second:
	// one-second HLS segments, four per variant.
	steps := [][]string{
		{"-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=4", "-f", "lavfi", "-i", "sine=frequency=440:duration=4",
			"-c:v", "libx264", "-preset", "ultrafast", "-g", "10", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "32k",
			"-shortest", "-movflags", "+faststart", f.Progressive},
		{"-i", f.Progressive, "-filter_complex", "[0:v]split=2[a][b];[b]scale=80:60[bs]",
			"-map", "[a]", "-map", "0:a", "-map", "[bs]", "-map", "0:a",
			"-c:v", "libx264", "-preset", "ultrafast", "-g", "10", "-sc_threshold", "0", "-b:v:0", "300k", "-b:v:1", "80k",
			"-c:a", "aac", "-b:a", "32k", "-var_stream_map", "v:0,a:0 v:1,a:1",
			"-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod", "-master_pl_name", "master.m3u8",
			"-hls_segment_filename", "hls/v%v/seg%d.ts", "hls/v%v/index.m3u8"},
	}
	for _, args := range steps {
		cmd := exec.CommandContext(ctx, "ffmpeg", append([]string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return f, fmt.Errorf("media fixture: ffmpeg %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	f.HLS = map[string][]string{}
	for _, v := range []string{"v0", "v1"} {
		segs, err := filepath.Glob(filepath.Join(dir, "hls", v, "seg*.ts"))
		if err != nil || len(segs) < 2 {
			return f, fmt.Errorf("media fixture: variant %s has %d segments, want at least 2", v, len(segs))
		}
		sort.Strings(segs)
		f.HLS[v] = []string{"hls/" + v + "/index.m3u8"}
		for _, s := range segs {
			f.HLS[v] = append(f.HLS[v], "hls/"+v+"/"+filepath.Base(s))
		}
	}
	return f, f.writeDASH()
}

// writeDASH writes the hand-made manifest and its segments. Their bytes
// are not media (nothing here plays DASH); each names itself so every
// capture has its own digest.
func (f *Files) writeDASH() error {
	reps := []struct {
		id string
		bw int
	}{{"lo", 100000}, {"mid", 400000}, {"hi", 1600000}}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT4S" minBufferTime="PT1S" profiles="urn:mpeg:dash:profile:isoff-live:2011">
 <Period id="p0">
  <AdaptationSet contentType="video" mimeType="video/mp4" segmentAlignment="true">
   <SegmentTemplate timescale="1000" duration="1000" startNumber="1" initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/seg-$Number%03d$.m4s"/>
`)
	f.DASH = map[string][]string{}
	for _, r := range reps {
		fmt.Fprintf(&b, "   <Representation id=%q bandwidth=\"%d\" codecs=\"avc1.42c00d\" width=\"160\" height=\"120\"/>\n", r.id, r.bw)
		names := []string{r.id + "/init.mp4"}
		for n := 1; n <= DASHSegments; n++ {
			names = append(names, fmt.Sprintf("%s/seg-%03d.m4s", r.id, n))
		}
		for _, name := range names {
			path := filepath.Join(f.Dir, "dash", filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return fmt.Errorf("media fixture: %w", err)
			}
			if err := os.WriteFile(path, []byte("dash segment "+name+"\n"), 0o644); err != nil {
				return fmt.Errorf("media fixture: %w", err)
			}
			f.DASH[r.id] = append(f.DASH[r.id], "dash/"+name)
		}
	}
	b.WriteString("  </AdaptationSet>\n </Period>\n</MPD>\n")
	if err := os.WriteFile(filepath.Join(f.Dir, filepath.FromSlash(f.DASHManifest)), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("media fixture: %w", err)
	}
	return nil
}

// ContentType is the media type a server sends for a fixture file.
func ContentType(name string) string {
	switch filepath.Ext(name) {
	case ".m3u8":
		return "application/vnd.apple.mpegurl"
	case ".ts":
		return "video/mp2t"
	case ".mpd":
		return "application/dash+xml"
	case ".mp4", ".m4s":
		return "video/mp4"
	case ".html":
		return "text/html; charset=utf-8"
	}
	return "application/octet-stream"
}
