package extract

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

const hlsBase = "https://media.example.com/live/master.m3u8"

const hlsMaster = `#EXTM3U
#EXT-X-VERSION:6
#EXT-X-SESSION-KEY:METHOD=AES-128,URI="keys/session.key"
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac-lo",NAME="English",URI="audio/lo/en.m3u8"
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac-hi",NAME="English, high",URI="audio/hi/en.m3u8"
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac-mid",NAME="mid",URI="audio/mid/en.m3u8"
#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",URI="subs/en.m3u8"
#EXT-X-STREAM-INF:BANDWIDTH=1280000,CODECS="avc1.4d401f,mp4a.40.2",AUDIO="aac-mid"
mid/index.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=400000,RESOLUTION=416x234,AUDIO="aac-lo"
lo/index.m3u8

#EXT-X-STREAM-INF:BANDWIDTH=5000000,RESOLUTION=1920x1080,AUDIO="aac-hi",SUBTITLES="subs"
https://cdn.example.net/hi/index.m3u8
#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=86000,URI="lo/iframes.m3u8"
`

const hlsMedia = "#EXTM3U\r\n" + `#EXT-X-TARGETDURATION:6
#EXT-X-MEDIA-SEQUENCE:0
#EXT-X-MAP:URI="init.mp4"
#EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.com/k1",IV=0x1
#EXTINF:6.0,
seg0.m4s
#EXTINF:6.0,
#EXT-X-BYTERANGE:1000@0
seg1.m4s
# a comment
#EXT-X-KEY:METHOD=NONE
#EXT-X-PART:DURATION=1.0,URI="part5.0.m4s"
#EXTINF:4.5,title with, commas
/abs/seg2.m4s
#EXT-X-ENDLIST
`

func linkURLs(links []Link) []string {
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = l.URL
	}
	return out
}

func TestHLS(t *testing.T) {
	cases := []struct {
		name     string
		doc      string
		o        StreamOptions
		want     []string
		info     StreamInfo
		contexts map[string]string
	}{
		{name: "master, extremes (default): lowest and highest with their groups", doc: hlsMaster,
			want: []string{"https://media.example.com/live/keys/session.key",
				"https://media.example.com/live/lo/index.m3u8", "https://cdn.example.net/hi/index.m3u8",
				"https://media.example.com/live/audio/hi/en.m3u8", "https://media.example.com/live/audio/lo/en.m3u8",
				"https://media.example.com/live/subs/en.m3u8"},
			info:     StreamInfo{Renditions: 3, Chosen: 2},
			contexts: map[string]string{"https://cdn.example.net/hi/index.m3u8": ContextHLSVariant, "https://media.example.com/live/subs/en.m3u8": ContextHLSMedia}},
		{name: "master, highest", doc: hlsMaster, o: StreamOptions{Variants: VariantsHighest},
			want: []string{"https://media.example.com/live/keys/session.key", "https://cdn.example.net/hi/index.m3u8",
				"https://media.example.com/live/audio/hi/en.m3u8", "https://media.example.com/live/subs/en.m3u8"},
			info: StreamInfo{Renditions: 3, Chosen: 1}},
		{name: "master, lowest", doc: hlsMaster, o: StreamOptions{Variants: VariantsLowest},
			want: []string{"https://media.example.com/live/keys/session.key", "https://media.example.com/live/lo/index.m3u8",
				"https://media.example.com/live/audio/lo/en.m3u8"},
			info: StreamInfo{Renditions: 3, Chosen: 1}},
		{name: "master, all: every variant, group and I-frame playlist", doc: hlsMaster, o: StreamOptions{Variants: VariantsAll},
			want: []string{"https://media.example.com/live/keys/session.key",
				"https://media.example.com/live/mid/index.m3u8", "https://media.example.com/live/lo/index.m3u8", "https://cdn.example.net/hi/index.m3u8",
				"https://media.example.com/live/lo/iframes.m3u8",
				"https://media.example.com/live/audio/hi/en.m3u8", "https://media.example.com/live/audio/lo/en.m3u8",
				"https://media.example.com/live/audio/mid/en.m3u8", "https://media.example.com/live/subs/en.m3u8"},
			info: StreamInfo{Renditions: 3, Chosen: 3}},
		{name: "master, none", doc: hlsMaster, o: StreamOptions{Variants: VariantsNone},
			want: []string{"https://media.example.com/live/keys/session.key"}, info: StreamInfo{Renditions: 3}},
		{name: "media playlist: init, key, segments; parts and METHOD=NONE skipped", doc: hlsMedia,
			want: []string{"https://media.example.com/live/init.mp4", "https://keys.example.com/k1",
				"https://media.example.com/live/seg0.m4s", "https://media.example.com/live/seg1.m4s", "https://media.example.com/abs/seg2.m4s"},
			info:     StreamInfo{Segments: 3},
			contexts: map[string]string{"https://media.example.com/live/init.mp4": ContextHLSMap, "https://keys.example.com/k1": ContextHLSKey, "https://media.example.com/live/seg0.m4s": ContextHLSSegment}},
		{name: "segments capped", doc: hlsMedia, o: StreamOptions{MaxSegments: 2},
			want: []string{"https://media.example.com/live/init.mp4", "https://keys.example.com/k1",
				"https://media.example.com/live/seg0.m4s", "https://media.example.com/live/seg1.m4s"},
			info: StreamInfo{Segments: 2, Truncated: true}},
		{name: "links capped", doc: hlsMedia, o: StreamOptions{Options: Options{MaxLinks: 3}},
			want: []string{"https://media.example.com/live/init.mp4", "https://keys.example.com/k1", "https://media.example.com/live/seg0.m4s"},
			info: StreamInfo{Segments: 1, Truncated: true}},
		{name: "BOM, no final newline, non-http segment dropped", doc: "\ufeff#EXTM3U\n#EXTINF:1,\nskd://x\n#EXTINF:1,\nlast.ts",
			want: []string{"https://media.example.com/live/last.ts"}, info: StreamInfo{Segments: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			links, info, err := HLS(strings.NewReader(c.doc), hlsBase, c.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := linkURLs(links); !slices.Equal(got, c.want) {
				t.Errorf("links\n got %q\nwant %q", got, c.want)
			}
			if info != c.info {
				t.Errorf("info %+v, want %+v", info, c.info)
			}
			for _, l := range links {
				if l.Hop != hopEmbed {
					t.Errorf("%s: hop %c, want E", l.URL, l.Hop)
				}
				if want, ok := c.contexts[l.URL]; ok && l.Context != want {
					t.Errorf("%s: context %q, want %q", l.URL, l.Context, want)
				}
			}
		})
	}
}

func TestHLSBadInput(t *testing.T) {
	long := "#EXTM3U\n#EXTINF:1,\nok.ts\n" + strings.Repeat("a", maxHLSLine+10) + "\nafter.ts\n"
	cases := []struct {
		name, doc string
		wantErr   string
		want      []string
	}{
		{"empty", "", "empty playlist", nil},
		{"not a playlist", "<html>not hls</html>\nseg.ts\n", "line 1 is not #EXTM3U", nil},
		{"a line too long keeps what came before", long, "line 4 longer than", []string{"https://media.example.com/live/ok.ts"}},
		{"unterminated quoted attribute", "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\n#EXTINF:1,\na.ts\n", "", []string{"https://media.example.com/live/a.ts"}},
		{"variant line without URI at the end", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n", "", nil},
		{"bandwidth not a number", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=lots\nv.m3u8\n", "", []string{"https://media.example.com/live/v.m3u8"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			links, _, err := HLS(strings.NewReader(c.doc), hlsBase, StreamOptions{})
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("err %v, want %q", err, c.wantErr)
			}
			if c.wantErr != "" && !errors.Is(err, ErrMalformed) {
				t.Errorf("err %v is not ErrMalformed", err)
			}
			if got := linkURLs(links); !slices.Equal(got, c.want) {
				t.Errorf("links %q, want %q", got, c.want)
			}
		})
	}
	t.Run("read error has its position", func(t *testing.T) {
		r := iotest.TimeoutReader(iotest.OneByteReader(strings.NewReader("#EXTM3U\n#EXTINF:1,\na.ts\n")))
		_, _, err := HLS(r, hlsBase, StreamOptions{})
		if err == nil || !strings.Contains(err.Error(), "read failed at line 1") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("bytes capped", func(t *testing.T) {
		doc := "#EXTM3U\n" + strings.Repeat("#EXTINF:1,\nseg.ts\n", 100)
		_, info, err := HLS(strings.NewReader(doc), hlsBase, StreamOptions{Options: Options{MaxBytes: 64}})
		if err != nil || !info.Truncated {
			t.Fatalf("err %v, info %+v: want truncated", err, info)
		}
	})
	t.Run("unknown variants choice", func(t *testing.T) {
		if _, _, err := HLS(strings.NewReader(hlsMaster), hlsBase, StreamOptions{Variants: "best"}); err == nil || !strings.Contains(err.Error(), `"best"`) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestHLSAttributes(t *testing.T) {
	got := hlsAttributes(`BANDWIDTH=1280000,CODECS="avc1.4d401f,mp4a.40.2",AUDIO="aac",RESOLUTION=640x360`)
	want := map[string]string{"BANDWIDTH": "1280000", "CODECS": "avc1.4d401f,mp4a.40.2", "AUDIO": "aac", "RESOLUTION": "640x360"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}
