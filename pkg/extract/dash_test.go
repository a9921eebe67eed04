package extract

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

const dashBase = "https://media.example.com/vod/stream.mpd"

func TestDASH(t *testing.T) {
	templated := `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT0H0M10.0S">
 <Period>
  <AdaptationSet contentType="video">
   <SegmentTemplate timescale="1000" duration="4000" startNumber="1"
     initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/seg-$Number%05d$.m4s"/>
   <Representation id="v240" bandwidth="300000"/>
   <Representation id="v1080" bandwidth="4000000"/>
   <Representation id="v720" bandwidth="2000000"/>
  </AdaptationSet>
  <AdaptationSet contentType="audio">
   <Representation id="a" bandwidth="128000">
    <SegmentTemplate timescale="48000" initialization="a/init-$Bandwidth$.mp4" media="a/$Time$.m4s">
     <SegmentTimeline><S t="0" d="96000" r="2"/><S d="48000"/></SegmentTimeline>
    </SegmentTemplate>
   </Representation>
  </AdaptationSet>
 </Period>
</MPD>`
	v := func(s string) string { return "https://media.example.com/vod/" + s }
	cases := []struct {
		name string
		doc  string
		o    StreamOptions
		want []string
		info StreamInfo
	}{
		{name: "template with $Number$ and a timeline, extremes", doc: templated,
			want: []string{v("v240/init.mp4"), v("v240/seg-00001.m4s"), v("v240/seg-00002.m4s"), v("v240/seg-00003.m4s"),
				v("v1080/init.mp4"), v("v1080/seg-00001.m4s"), v("v1080/seg-00002.m4s"), v("v1080/seg-00003.m4s"),
				v("a/init-128000.mp4"), v("a/0.m4s"), v("a/96000.m4s"), v("a/192000.m4s"), v("a/288000.m4s")},
			info: StreamInfo{Renditions: 4, Chosen: 3, Segments: 10}},
		{name: "highest only, capped segments", doc: templated, o: StreamOptions{Variants: VariantsHighest, MaxSegments: 2},
			want: []string{v("v1080/init.mp4"), v("v1080/seg-00001.m4s"), v("v1080/seg-00002.m4s"),
				v("a/init-128000.mp4"), v("a/0.m4s"), v("a/96000.m4s")},
			info: StreamInfo{Renditions: 4, Chosen: 2, Segments: 4, Truncated: true}},
		{name: "BaseURLs resolve level by level; single-file representations", doc: `<MPD type="static">
 <BaseURL>https://cdn.example.net/root/</BaseURL>
 <Period><BaseURL>p1/</BaseURL>
  <AdaptationSet>
   <Representation id="lo" bandwidth="1"><BaseURL>lo.mp4</BaseURL><SegmentBase><Initialization sourceURL="lo-init.mp4"/></SegmentBase></Representation>
   <Representation id="hi" bandwidth="9"><BaseURL>/top/hi.mp4</BaseURL></Representation>
  </AdaptationSet>
 </Period></MPD>`,
			want: []string{"https://cdn.example.net/root/p1/lo-init.mp4", "https://cdn.example.net/root/p1/lo.mp4", "https://cdn.example.net/top/hi.mp4"},
			info: StreamInfo{Renditions: 2, Chosen: 2, Segments: 2}},
		{name: "segment list", doc: `<MPD><Period><AdaptationSet><Representation id="r" bandwidth="5">
   <SegmentList><Initialization sourceURL="i.mp4"/><SegmentURL media="s1.m4s"/><SegmentURL media="s2.m4s"/></SegmentList>
  </Representation></AdaptationSet></Period></MPD>`,
			want: []string{v("i.mp4"), v("s1.m4s"), v("s2.m4s")}, info: StreamInfo{Renditions: 1, Chosen: 1, Segments: 2}},
		{name: "live manifest numbered without a timeline lists no segments", doc: `<MPD type="dynamic"><Period><AdaptationSet>
   <SegmentTemplate duration="2" media="$Number$.ts" initialization="init.ts"/><Representation id="r" bandwidth="5"/>
  </AdaptationSet></Period></MPD>`,
			want: []string{v("init.ts")}, info: StreamInfo{Renditions: 1, Chosen: 1, Live: true}},
		{name: "negative repeat runs to the period end; $$ and unknown identifiers kept", doc: `<MPD mediaPresentationDuration="PT4S"><Period><AdaptationSet><Representation id="r" bandwidth="5">
   <SegmentTemplate timescale="1" media="x$$$Time$-$Foo$.m4s"><SegmentTimeline><S t="0" d="1" r="-1"/></SegmentTimeline></SegmentTemplate>
  </Representation></AdaptationSet></Period></MPD>`,
			want: []string{v("x$0-$Foo$.m4s"), v("x$1-$Foo$.m4s"), v("x$2-$Foo$.m4s"), v("x$3-$Foo$.m4s")},
			info: StreamInfo{Renditions: 1, Chosen: 1, Segments: 4}},
		{name: "a hostile count is bounded", doc: `<MPD mediaPresentationDuration="P99999999DT1S"><Period><AdaptationSet><Representation id="r" bandwidth="5">
   <SegmentTemplate duration="1" media="$Number$.m4s"/></Representation></AdaptationSet></Period></MPD>`,
			o: StreamOptions{MaxSegments: 3}, want: []string{v("1.m4s"), v("2.m4s"), v("3.m4s")},
			info: StreamInfo{Renditions: 1, Chosen: 1, Segments: 3, Truncated: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			links, info, err := DASH(strings.NewReader(c.doc), dashBase, c.o)
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
				if l.Hop != hopEmbed || l.Context == "" {
					t.Errorf("%s: hop %c context %q", l.URL, l.Hop, l.Context)
				}
			}
		})
	}
}

func TestDASHBadInput(t *testing.T) {
	cases := []struct {
		name, doc, wantErr string
	}{
		{"not XML", "#EXTM3U\n", "no <MPD> element"},
		{"wrong root", `<urlset><url/></urlset>`, "root element <urlset>, not <MPD>"},
		{"broken XML has its line", "<MPD>\n<Period>\n<AdaptationSet></Period>\n</MPD>", "line 3"},
		{"undefined entity", `<MPD><BaseURL>&evil;</BaseURL></MPD>`, "line 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := DASH(strings.NewReader(c.doc), dashBase, StreamOptions{})
			if err == nil || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err %v, want ErrMalformed with %q", err, c.wantErr)
			}
		})
	}
	t.Run("cut by MaxBytes", func(t *testing.T) {
		doc := "<MPD><Period>" + strings.Repeat("<AdaptationSet></AdaptationSet>", 100) + "</Period></MPD>"
		_, info, err := DASH(strings.NewReader(doc), dashBase, StreamOptions{Options: Options{MaxBytes: 100}})
		if err == nil || !info.Truncated || !strings.Contains(err.Error(), "cut at 100 bytes") {
			t.Fatalf("err %v, info %+v", err, info)
		}
	})
	t.Run("read error has its position", func(t *testing.T) {
		r := io.MultiReader(strings.NewReader("<MPD><Period>"), iotest.ErrReader(errors.New("connection reset")))
		_, _, err := DASH(r, dashBase, StreamOptions{})
		if err == nil || errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "read failed at byte 13: connection reset") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("bad durations count nothing", func(t *testing.T) {
		for _, d := range []string{"", "P", "PT", "1S", "P1M", "PT1D", "PTxS", "PT-1S"} {
			if s, err := isoDuration(d); err == nil && s != 0 {
				t.Errorf("isoDuration(%q) = %v, nil", d, s)
			}
		}
	})
}

func TestDASHTemplate(t *testing.T) {
	v := templateVars{id: "v1", bandwidth: 500, number: 7, time: 1234}
	for in, want := range map[string]string{
		"$RepresentationID$/$Number$.m4s": "v1/7.m4s",
		"$Number%03d$":                    "007",
		"$Time%010d$":                     "0000001234",
		"$Bandwidth$":                     "500",
		"$$Number$$":                      "$Number$",
		"$Number%5x$":                     "$Number%5x$",
		"$Number%0999d$":                  "$Number%0999d$",
		"open $Number":                    "open $Number",
		"$RepresentationID%02d$":          "$RepresentationID%02d$",
	} {
		if got := v.expand(in); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]float64{"PT10S": 10, "PT1H2M3.5S": 3723.5, "P1DT1S": 86401, "PT0H0M10.0S": 10} {
		if got, err := isoDuration(in); err != nil || got != want {
			t.Errorf("isoDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}
