package qa

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math"
	"strings"

	"golang.org/x/net/html"

	"github.com/trawler-crawl/trawler/internal/editdist"
)

// Severity grades a score as Browsertrix grades its QA matches.
type Severity string

// The grades, worst first.
const (
	Severe   Severity = "severe"
	Moderate Severity = "moderate"
	Good     Severity = "good"
)

// Grade is Browsertrix's grading: below 0.5 severe, below 0.9 moderate.
func Grade(score float64) Severity {
	switch {
	case score < 0.5:
		return Severe
	case score < 0.9:
		return Moderate
	}
	return Good
}

// PixelThreshold is pixelmatch's default threshold, Browsertrix's too.
const PixelThreshold = 0.1

// maxYIQDelta is the largest YIQ distance between two colours
// (pixelmatch's 35215).
const maxYIQDelta = 35215.0

// ScreenshotMatch compares two PNG images pixel by pixel with pixelmatch's
// YIQ colour distance at threshold (pixelmatch: colorDelta against
// 35215·threshold²), transparent pixels blended onto white. It returns 1 −
// differing pixels / pixels, over the larger of the two sizes: a pixel
// only one image has differs. Unlike pixelmatch with includeAA off,
// anti-aliased pixels are not excused, so a replay rendered the same
// scores 1 and one that differs scores a little lower than pixelmatch
// would say.
func ScreenshotMatch(captured, replayed []byte, threshold float64) (float64, error) {
	a, err := png.Decode(bytes.NewReader(captured))
	if err != nil {
		return 0, fmt.Errorf("capture-time screenshot: %w", err)
	}
	b, err := png.Decode(bytes.NewReader(replayed))
	if err != nil {
		return 0, fmt.Errorf("replay screenshot: %w", err)
	}
	ab, bb := a.Bounds(), b.Bounds()
	w, h := max(ab.Dx(), bb.Dx()), max(ab.Dy(), bb.Dy())
	if w == 0 || h == 0 {
		return 0, fmt.Errorf("screenshots of %dx%d and %dx%d: nothing to compare", ab.Dx(), ab.Dy(), bb.Dx(), bb.Dy())
	}
	limit := maxYIQDelta * threshold * threshold
	diff := 0
	for y := range h {
		for x := range w {
			pa := image.Pt(ab.Min.X+x, ab.Min.Y+y)
			pb := image.Pt(bb.Min.X+x, bb.Min.Y+y)
			if !pa.In(ab) || !pb.In(bb) || colorDelta(a, b, pa, pb) > limit {
				diff++
			}
		}
	}
	return 1 - float64(diff)/float64(w*h), nil
}

// colorDelta is pixelmatch's squared YIQ distance of two pixels, each
// blended onto white by its alpha.
func colorDelta(a, b image.Image, pa, pb image.Point) float64 {
	r1, g1, b1 := blended(a, pa)
	r2, g2, b2 := blended(b, pb)
	y := rgb2y(r1, g1, b1) - rgb2y(r2, g2, b2)
	i := rgb2i(r1, g1, b1) - rgb2i(r2, g2, b2)
	q := rgb2q(r1, g1, b1) - rgb2q(r2, g2, b2)
	return 0.5053*y*y + 0.299*i*i + 0.1957*q*q
}

// blended is the pixel in 0..255 per channel, blended onto white.
func blended(img image.Image, p image.Point) (float64, float64, float64) {
	r, g, b, a := img.At(p.X, p.Y).RGBA() // premultiplied, 0..65535
	if a == 0 {
		return 255, 255, 255
	}
	alpha := float64(a) / 65535
	// Un-premultiply, then blend with white as pixelmatch's blend does.
	mix := func(c uint32) float64 { return 255 + (float64(c)/float64(a)*255-255)*alpha }
	return mix(r), mix(g), mix(b)
}

func rgb2y(r, g, b float64) float64 { return r*0.29889531 + g*0.58662247 + b*0.11448223 }
func rgb2i(r, g, b float64) float64 { return r*0.59597799 - g*0.27417610 - b*0.32180189 }
func rgb2q(r, g, b float64) float64 { return r*0.21147017 - g*0.52261711 + b*0.31114694 }

// VisibleText is the text a reader sees in an HTML document: text nodes
// outside script, style, noscript and template, white space collapsed.
func VisibleText(doc []byte) string {
	z := html.NewTokenizer(bytes.NewReader(doc))
	var b strings.Builder
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.Join(strings.Fields(b.String()), " ")
		case html.StartTagToken:
			if hidden(z) {
				skip++
			}
		case html.EndTagToken:
			if hidden(z) && skip > 0 {
				skip--
			}
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
				b.WriteByte(' ')
			}
		}
	}
}

func hidden(z *html.Tokenizer) bool {
	name, _ := z.TagName()
	switch string(name) {
	case "script", "style", "noscript", "template", "title":
		return true
	}
	return false
}

// MaxTextCells bounds the cost of one text comparison: the cells of the
// Levenshtein table (length × length). Past it the texts are compared word
// by word, and past it again only their first words are.
const MaxTextCells = 16 << 20

// TextMatch is 1 − Levenshtein(a, b) / max(len(a), len(b)), in characters
// (Browsertrix's text match). Long texts are compared by words (each word
// one symbol), and texts whose words would still exceed MaxTextCells by
// their first words only; how says which was done ("chars", "words",
// "first N words").
func TextMatch(a, b string) (score float64, how string) {
	if a == b {
		return 1, "chars"
	}
	ra, rb := []rune(a), []rune(b)
	if len(ra)*len(rb) <= MaxTextCells {
		return 1 - float64(editdist.Of(ra, rb))/float64(max(len(ra), len(rb))), "chars"
	}
	wa, wb := words(a, b)
	how = "words"
	if len(wa)*len(wb) > MaxTextCells {
		// The same number of words from each, so the budget holds.
		n := int(math.Sqrt(MaxTextCells))
		wa, wb = wa[:min(n, len(wa))], wb[:min(n, len(wb))]
		how = fmt.Sprintf("first %d words", n)
	}
	return 1 - float64(editdist.Of(wa, wb))/float64(max(len(wa), len(wb))), how
}

// words gives each distinct word of a and b a number.
func words(a, b string) ([]int32, []int32) {
	ids := map[string]int32{}
	conv := func(s string) []int32 {
		f := strings.Fields(s)
		out := make([]int32, len(f))
		for i, w := range f {
			id, ok := ids[w]
			if !ok {
				id = int32(len(ids))
				ids[w] = id
			}
			out[i] = id
		}
		return out
	}
	return conv(a), conv(b)
}
