package extract

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Contexts of links found in HLS playlists, named by the tag that carried
// them as Heritrix names an HTML link by its element and attribute.
const (
	ContextHLSVariant  = "EXT-X-STREAM-INF"
	ContextHLSIFrame   = "EXT-X-I-FRAME-STREAM-INF/@URI"
	ContextHLSMedia    = "EXT-X-MEDIA/@URI"
	ContextHLSSegment  = "EXTINF"
	ContextHLSMap      = "EXT-X-MAP/@URI"
	ContextHLSKey      = "EXT-X-KEY/@URI"
	ContextHLSSessData = "EXT-X-SESSION-DATA/@URI"
)

// maxHLSLine bounds one playlist line; a longer one is not a playlist.
const maxHLSLine = 64 << 10

// HLS extracts the outlinks of an HLS playlist (RFC 8216) streamed from r,
// whose URL is base. A master playlist gives its variant playlists (those
// StreamOptions.Variants chooses by BANDWIDTH), the alternative renditions
// (EXT-X-MEDIA) of the groups the chosen variants name, and session keys
// and data; I-frame playlists are followed only with VariantsAll. A media
// playlist gives its segments (at most MaxSegments), its init sections
// (EXT-X-MAP) and its keys (EXT-X-KEY). Low-latency partial segments and
// preload hints are left alone: the full segments hold the same media.
// Every link has hop E. Errors: ErrMalformed when the first line is not
// #EXTM3U or a line is unreasonably long (with its line number), or a
// failed read; links found before the error are returned.
func HLS(r io.Reader, base string, o StreamOptions) ([]Link, StreamInfo, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, StreamInfo{}, fmt.Errorf("extract hls: %w", err)
	}
	lr := &limitReader{r: r, n: o.MaxBytes}
	p := &hlsParser{o: o, c: newCollector(o.Options), base: base, lr: lr}
	err = p.read(bufio.NewReaderSize(lr, 16<<10))
	p.emitMaster()
	info := p.info
	info.Truncated = info.Truncated || lr.truncated || p.c.full
	if err != nil {
		return p.c.links, info, fmt.Errorf("extract hls %s: %w", base, err)
	}
	return p.c.links, info, nil
}

type hlsVariant struct {
	uri, context string
	groups       []string // "AUDIO=aac", the EXT-X-MEDIA groups it plays with
}

type hlsParser struct {
	o    StreamOptions
	c    *collector
	base string
	lr   *limitReader
	info StreamInfo

	variants   []hlsVariant
	renditions []rendition
	iframes    []string
	media      map[string][]string // "TYPE=GROUP-ID" to rendition URIs
	pendingInf map[string]string   // an EXT-X-STREAM-INF waiting for its URI line
	segments   int
}

func (p *hlsParser) read(br *bufio.Reader) error {
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if n == 1 {
					return fmt.Errorf("%w: empty playlist", ErrMalformed)
				}
				return nil
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				return fmt.Errorf("%w: line %d longer than %d bytes", ErrMalformed, n, maxHLSLine)
			}
			return fmt.Errorf("read failed at line %d (byte %d): %w", n, p.lr.read, err)
		}
		if n == 1 {
			if !strings.HasPrefix(strings.TrimPrefix(line, "\ufeff"), "#EXTM3U") {
				return fmt.Errorf("%w: line 1 is not #EXTM3U", ErrMalformed)
			}
			continue
		}
		if !p.line(line) {
			return nil
		}
	}
}

// readLine returns one line without its end, refusing lines longer than
// maxHLSLine.
func readLine(br *bufio.Reader) (string, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxHLSLine {
			return "", bufio.ErrBufferFull
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (len(buf) == 0 || !errors.Is(err, io.EOF)) {
			return "", err
		}
		return string(bytes.TrimRight(buf, "\r\n")), nil
	}
}

// line handles one playlist line; false stops reading (a limit reached).
func (p *hlsParser) line(line string) bool {
	line = strings.TrimSpace(line)
	switch {
	case line == "":
		return true
	case !strings.HasPrefix(line, "#"):
		return p.uriLine(line)
	}
	tag, attrs, _ := strings.Cut(line, ":")
	switch tag {
	case "#EXT-X-STREAM-INF":
		p.pendingInf = hlsAttributes(attrs)
	case "#EXT-X-I-FRAME-STREAM-INF":
		if u := hlsAttributes(attrs)["URI"]; u != "" {
			p.iframes = append(p.iframes, u)
		}
	case "#EXT-X-MEDIA":
		a := hlsAttributes(attrs)
		if u := a["URI"]; u != "" {
			if p.media == nil {
				p.media = map[string][]string{}
			}
			k := a["TYPE"] + "=" + a["GROUP-ID"]
			p.media[k] = append(p.media[k], u)
		}
	case "#EXT-X-MAP":
		return p.add(hlsAttributes(attrs)["URI"], ContextHLSMap)
	case "#EXT-X-KEY", "#EXT-X-SESSION-KEY":
		if a := hlsAttributes(attrs); a["METHOD"] != "NONE" {
			return p.add(a["URI"], ContextHLSKey)
		}
	case "#EXT-X-SESSION-DATA":
		return p.add(hlsAttributes(attrs)["URI"], ContextHLSSessData)
	}
	return true
}

// uriLine is a variant playlist after EXT-X-STREAM-INF, or a segment.
func (p *hlsParser) uriLine(uri string) bool {
	if inf := p.pendingInf; inf != nil {
		p.pendingInf = nil
		bw, _ := strconv.ParseInt(inf["BANDWIDTH"], 10, 64)
		v := hlsVariant{uri: uri, context: ContextHLSVariant}
		for _, t := range []string{"AUDIO", "VIDEO", "SUBTITLES"} {
			if g := inf[t]; g != "" {
				v.groups = append(v.groups, t+"="+g)
			}
		}
		p.renditions = append(p.renditions, rendition{bandwidth: bw, index: len(p.variants)})
		p.variants = append(p.variants, v)
		return true
	}
	if p.segments >= p.o.MaxSegments {
		p.info.Truncated = true
		return false
	}
	p.segments++
	p.info.Segments++
	return p.add(uri, ContextHLSSegment)
}

func (p *hlsParser) add(ref, context string) bool {
	if ref == "" {
		return true
	}
	p.c.add(p.base, ref, messages.HopEmbed, context)
	return !p.c.full
}

// emitMaster adds the chosen variants and what they play with, once the
// whole master playlist has been read.
func (p *hlsParser) emitMaster() {
	p.info.Renditions = len(p.variants)
	chosen := choose(p.renditions, p.o.Variants)
	p.info.Chosen = len(chosen)
	groups := map[string]bool{}
	for _, i := range chosen {
		v := p.variants[i]
		if !p.add(v.uri, v.context) {
			return
		}
		for _, g := range v.groups {
			groups[g] = true
		}
	}
	if p.o.Variants == VariantsAll {
		for k := range p.media {
			groups[k] = true
		}
		for _, u := range p.iframes {
			if !p.add(u, ContextHLSIFrame) {
				return
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		for _, u := range p.media[k] {
			if !p.add(u, ContextHLSMedia) {
				return
			}
		}
	}
}

// hlsAttributes parses an attribute list (RFC 8216 4.2): NAME=value pairs
// separated by commas, where a quoted string may hold commas. Quotes are
// removed; a malformed pair ends the list.
func hlsAttributes(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		name = strings.TrimSpace(name)
		var val string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				break
			}
			val, rest = rest[1:1+end], rest[2+end:]
			_, rest, _ = strings.Cut(rest, ",")
		} else {
			val, rest, _ = strings.Cut(rest, ",")
		}
		out[name] = strings.TrimSpace(val)
		s = rest
	}
	return out
}
