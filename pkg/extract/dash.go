package extract

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Contexts of links found in DASH manifests: the element and attribute.
const (
	ContextDASHBaseURL  = "BaseURL"
	ContextDASHInit     = "SegmentTemplate/@initialization"
	ContextDASHMedia    = "SegmentTemplate/@media"
	ContextDASHIndex    = "SegmentTemplate/@index"
	ContextDASHListInit = "Initialization/@sourceURL"
	ContextDASHListSeg  = "SegmentURL/@media"
)

// The parts of an MPD (ISO/IEC 23009-1) that name resources. Element
// names match in any namespace.
type mpd struct {
	XMLName  xml.Name    `xml:"MPD"`
	Type     string      `xml:"type,attr"`
	Duration string      `xml:"mediaPresentationDuration,attr"`
	BaseURL  []string    `xml:"BaseURL"`
	Periods  []mpdPeriod `xml:"Period"`
}

type mpdPeriod struct {
	Duration string `xml:"duration,attr"`
	segmentInfo
	BaseURL []string        `xml:"BaseURL"`
	Sets    []mpdAdaptation `xml:"AdaptationSet"`
}

type mpdAdaptation struct {
	segmentInfo
	BaseURL []string            `xml:"BaseURL"`
	Reps    []mpdRepresentation `xml:"Representation"`
}

type mpdRepresentation struct {
	ID        string `xml:"id,attr"`
	Bandwidth int64  `xml:"bandwidth,attr"`
	segmentInfo
	BaseURL []string `xml:"BaseURL"`
}

// segmentInfo is what each level may say about segments; a lower level's
// settings override a higher one's, attribute by attribute.
type segmentInfo struct {
	Template *mpdTemplate `xml:"SegmentTemplate"`
	List     *mpdList     `xml:"SegmentList"`
	Base     *mpdBase     `xml:"SegmentBase"`
}

type mpdTemplate struct {
	Media          *string      `xml:"media,attr"`
	Initialization *string      `xml:"initialization,attr"`
	Index          *string      `xml:"index,attr"`
	StartNumber    *int64       `xml:"startNumber,attr"`
	Timescale      *int64       `xml:"timescale,attr"`
	Duration       *int64       `xml:"duration,attr"`
	Timeline       *mpdTimeline `xml:"SegmentTimeline"`
}

type mpdTimeline struct {
	S []struct {
		T *int64 `xml:"t,attr"`
		D int64  `xml:"d,attr"`
		R int64  `xml:"r,attr"`
	} `xml:"S"`
}

type mpdList struct {
	Init     *mpdURL `xml:"Initialization"`
	Segments []struct {
		Media string `xml:"media,attr"`
	} `xml:"SegmentURL"`
}

type mpdBase struct {
	Init *mpdURL `xml:"Initialization"`
}

type mpdURL struct {
	SourceURL string `xml:"sourceURL,attr"`
}

// DASH extracts the outlinks of a DASH manifest (MPD) streamed from r,
// whose URL is base: for each adaptation set, the representations that
// StreamOptions.Variants chooses by bandwidth, and for each of those its
// BaseURL (a single-file representation), initialization and index
// segments, and media segments (SegmentTemplate with $Number$ or a
// SegmentTimeline's $Time$, or SegmentList), at most MaxSegments each.
// BaseURLs resolve level by level (MPD, Period, AdaptationSet,
// Representation). Segments numbered without a timeline are counted from
// the period's or the presentation's duration; a live manifest
// (type="dynamic") without one lists none (StreamInfo.Live). Every link
// has hop E. Errors: ErrMalformed for XML that does not parse (with its
// line) or whose root is not MPD, or a failed read.
func DASH(r io.Reader, base string, o StreamOptions) ([]Link, StreamInfo, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, StreamInfo{}, fmt.Errorf("extract dash: %w", err)
	}
	lr := &limitReader{r: r, n: o.MaxBytes}
	m, err := decodeMPD(lr)
	if err != nil {
		if lr.truncated {
			return nil, StreamInfo{Truncated: true}, fmt.Errorf("extract dash %s: %w: cut at %d bytes", base, ErrMalformed, o.MaxBytes)
		}
		return nil, StreamInfo{}, fmt.Errorf("extract dash %s: %w", base, err)
	}
	d := &dashWalker{o: o, c: newCollector(o.Options), live: m.Type == "dynamic"}
	d.walk(m, base)
	d.info.Truncated = d.info.Truncated || d.c.full
	return d.c.links, d.info, nil
}

type dashWalker struct {
	o    StreamOptions
	c    *collector
	live bool
	info StreamInfo
}

// resolveBase applies a level's first BaseURL to its parent's base.
func (d *dashWalker) resolveBase(parent string, bases []string) string {
	if len(bases) == 0 || strings.TrimSpace(bases[0]) == "" {
		return parent
	}
	abs, err := d.o.Resolve(parent, strings.TrimSpace(bases[0]))
	if err != nil {
		return parent
	}
	return abs
}

func (d *dashWalker) walk(m mpd, base string) {
	base = d.resolveBase(base, m.BaseURL)
	for _, p := range m.Periods {
		dur := p.Duration
		if dur == "" && len(m.Periods) == 1 {
			dur = m.Duration
		}
		seconds, _ := isoDuration(dur)
		pbase := d.resolveBase(base, p.BaseURL)
		for _, set := range p.Sets {
			sbase := d.resolveBase(pbase, set.BaseURL)
			rs := make([]rendition, len(set.Reps))
			for i, rep := range set.Reps {
				rs[i] = rendition{bandwidth: rep.Bandwidth, index: i}
			}
			d.info.Renditions += len(rs)
			chosen := choose(rs, d.o.Variants)
			d.info.Chosen += len(chosen)
			for _, i := range chosen {
				rep := set.Reps[i]
				info := merge(p.segmentInfo, set.segmentInfo, rep.segmentInfo)
				if !d.representation(rep, info, d.resolveBase(sbase, rep.BaseURL), len(rep.BaseURL) > 0, seconds) {
					return
				}
			}
		}
	}
}

// merge overlays segment information from the outer level to the inner.
func merge(levels ...segmentInfo) segmentInfo {
	var out segmentInfo
	for _, l := range levels {
		if l.Template != nil {
			out.Template = overlayTemplate(out.Template, l.Template)
		}
		if l.List != nil {
			out.List = l.List
		}
		if l.Base != nil {
			out.Base = l.Base
		}
	}
	return out
}

func overlayTemplate(outer, inner *mpdTemplate) *mpdTemplate {
	if outer == nil {
		return inner
	}
	t := *outer
	for _, f := range []struct{ dst, src **string }{{&t.Media, &inner.Media}, {&t.Initialization, &inner.Initialization}, {&t.Index, &inner.Index}} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
	for _, f := range []struct{ dst, src **int64 }{{&t.StartNumber, &inner.StartNumber}, {&t.Timescale, &inner.Timescale}, {&t.Duration, &inner.Duration}} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
	if inner.Timeline != nil {
		t.Timeline = inner.Timeline
	}
	return &t
}

// representation adds one representation's resources; false once a limit
// stops extraction.
func (d *dashWalker) representation(rep mpdRepresentation, info segmentInfo, base string, ownBase bool, seconds float64) bool {
	add := func(ref, ctx string) bool {
		if ref != "" {
			d.c.add(base, ref, messages.HopEmbed, ctx)
		}
		return !d.c.full
	}
	switch {
	case info.Template != nil:
		return d.template(rep, info.Template, add, seconds)
	case info.List != nil:
		if info.List.Init != nil && !add(info.List.Init.SourceURL, ContextDASHListInit) {
			return false
		}
		for i, s := range info.List.Segments {
			if i >= d.o.MaxSegments {
				d.info.Truncated = true
				break
			}
			d.info.Segments++
			if !add(s.Media, ContextDASHListSeg) {
				return false
			}
		}
		return true
	}
	if info.Base != nil && info.Base.Init != nil && !add(info.Base.Init.SourceURL, ContextDASHListInit) {
		return false
	}
	if ownBase {
		// A representation that is one file: its BaseURL is the media.
		d.info.Segments++
		return add(base, ContextDASHBaseURL)
	}
	return true
}

func (d *dashWalker) template(rep mpdRepresentation, t *mpdTemplate, add func(string, string) bool, seconds float64) bool {
	vars := templateVars{id: rep.ID, bandwidth: rep.Bandwidth}
	if t.Initialization != nil && !add(vars.expand(*t.Initialization), ContextDASHInit) {
		return false
	}
	if t.Index != nil && !add(vars.expand(*t.Index), ContextDASHIndex) {
		return false
	}
	if t.Media == nil {
		return true
	}
	number := int64(1)
	if t.StartNumber != nil {
		number = *t.StartNumber
	}
	for _, seg := range d.segments(t, seconds) {
		vars.number, vars.time = number, seg
		number++
		d.info.Segments++
		if !add(vars.expand(*t.Media), ContextDASHMedia) {
			return false
		}
	}
	return true
}

// segments returns the start time of each segment a template lists, at
// most MaxSegments.
func (d *dashWalker) segments(t *mpdTemplate, seconds float64) []int64 {
	max := d.o.MaxSegments
	scale := int64(1)
	if t.Timescale != nil && *t.Timescale > 0 {
		scale = *t.Timescale
	}
	if t.Timeline != nil {
		return d.timeline(t.Timeline, int64(math.Min(seconds*float64(scale), math.MaxInt64/2)))
	}
	if t.Duration == nil || *t.Duration <= 0 {
		return nil
	}
	if d.live || seconds <= 0 {
		d.info.Live = d.live
		return nil
	}
	n := math.Ceil(seconds * float64(scale) / float64(*t.Duration))
	if n > float64(max) {
		n = float64(max)
		d.info.Truncated = true
	}
	out := make([]int64, 0, int(n))
	for i := int64(0); i < int64(n); i++ {
		out = append(out, i**t.Duration)
	}
	return out
}

// timeline lists a SegmentTimeline's start times. An S element repeats r
// more times; r < 0 repeats until the next S's start or, for the last, the
// period's end (end, in timescale units; 0 when unknown: no repeat).
func (d *dashWalker) timeline(tl *mpdTimeline, end int64) []int64 {
	var out []int64
	var at int64
	for i, s := range tl.S {
		if s.T != nil {
			at = *s.T
		}
		if s.D <= 0 {
			continue
		}
		repeats := s.R
		if repeats < 0 {
			until := end
			if i+1 < len(tl.S) && tl.S[i+1].T != nil {
				until = *tl.S[i+1].T
			}
			repeats = (until-at+s.D-1)/s.D - 1
		}
		for r := int64(0); r <= repeats; r++ {
			if len(out) >= d.o.MaxSegments {
				d.info.Truncated = true
				return out
			}
			out = append(out, at)
			at += s.D
		}
	}
	return out
}

// decodeMPD reads the MPD element, which must be the document's root.
func decodeMPD(lr *limitReader) (mpd, error) {
	var m mpd
	rec := &errRecorder{r: lr}
	dec := xml.NewDecoder(rec)
	malformed := func(err error) error {
		if rec.err != nil && !errors.Is(rec.err, io.EOF) {
			return fmt.Errorf("read failed at byte %d: %w", lr.read, rec.err)
		}
		line, _ := dec.InputPos()
		return fmt.Errorf("%w: line %d: %v", ErrMalformed, line, err)
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return m, fmt.Errorf("%w: no <MPD> element", ErrMalformed)
		}
		if err != nil {
			return m, malformed(err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "MPD" {
				line, _ := dec.InputPos()
				return m, fmt.Errorf("%w: line %d: root element <%s>, not <MPD>", ErrMalformed, line, se.Name.Local)
			}
			if err := dec.DecodeElement(&m, &se); err != nil {
				return m, malformed(err)
			}
			return m, nil
		}
	}
}

// errRecorder keeps the error its reader returned, so that a failed read
// is told apart from a document that does not parse or fit the structure.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.err = err
	}
	return n, err
}
