package testweb

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// The tests in this file pin the served bytes of the allocation-free
// rendering helpers to the straightforward implementations they replaced,
// which are kept here as references.

// refRenderPNG is renderPNG as it was: png.Encode of a SetNRGBA-filled image.
func refRenderPNG(s *Site, h int, p string) ([]byte, error) {
	v := s.hashOf(uint64(h), pathKey(p), saltImage)
	side := 4
	if len(p) > 7 && p[len(p)-7:] == "-2x.png" {
		side = 8
	}
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	c := color.NRGBA{R: uint8(v), G: uint8(v >> 8), B: uint8(v >> 16), A: 255}
	for y := range side {
		for x := range side {
			img.SetNRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	err := png.Encode(&b, img)
	return b.Bytes(), err
}

// The pooled encoder writes exactly what png.Encode writes, also when many
// requests share the pool at once.
func TestRenderPNGMatchesPNGEncode(t *testing.T) {
	s, err := Generate(Config{Seed: 5, Hosts: 3, PagesPerHost: 40})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	paths = append(paths, namedImages[:]...)
	for k := range s.images {
		paths = append(paths, imagePath(k, false), imagePath(k, true))
	}
	var wg sync.WaitGroup
	for worker := range 4 {
		wg.Go(func() {
			var b bytes.Buffer
			for round := range 3 {
				for h := range s.cfg.Hosts {
					for _, p := range paths {
						want, err := refRenderPNG(s, h, p)
						if err != nil {
							t.Errorf("png.Encode %s: %v", p, err)
							return
						}
						b.Reset()
						if err := s.renderPNG(&b, h, p); err != nil {
							t.Errorf("renderPNG %s: %v", p, err)
							return
						}
						if !bytes.Equal(b.Bytes(), want) {
							t.Errorf("worker %d round %d host %d %s: renderPNG differs from png.Encode:\n%x\n%x", worker, round, h, p, b.Bytes(), want)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
}

// refParagraphText is paragraphText as it was.
func refParagraphText(b *bytes.Buffer, rng *rand.Rand) {
	var sb strings.Builder
	n := 2 + rng.IntN(5)
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		k := 4 + rng.IntN(10)
		for j := range k {
			w := words[rng.IntN(len(words))]
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				sb.WriteByte(' ')
			}
			sb.WriteString(w)
		}
		sb.WriteByte('.')
	}
	b.WriteString(sb.String())
}

// refTitle is title as it was.
func refTitle(r *rand.Rand) string {
	n := 2 + r.IntN(2)
	parts := make([]string, n)
	for i := range parts {
		w := words[r.IntN(len(words)-7)]
		parts[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(parts, " ")
}

// newRNGPair returns two identical random streams.
func newRNGPair(seed uint64) (*rand.Rand, *rand.Rand) {
	return rand.New(rand.NewPCG(seed, mix(seed))), rand.New(rand.NewPCG(seed, mix(seed)))
}

// paragraphText and title write the same text as before and consume the
// random stream identically, so everything rendered after them is
// unchanged too.
func TestTextMatchesReference(t *testing.T) {
	for seed := range uint64(2000) {
		got, want := newRNGPair(seed)
		var gb, wb bytes.Buffer
		for range 5 {
			paragraphText(&gb, got)
			refParagraphText(&wb, want)
			gb.WriteString(title(got))
			wb.WriteString(refTitle(want))
		}
		if gb.String() != wb.String() {
			t.Fatalf("seed %d: text differs:\n%s\n---\n%s", seed, gb.String(), wb.String())
		}
		if g, w := got.Uint64(), want.Uint64(); g != w {
			t.Fatalf("seed %d: random stream position differs afterwards", seed)
		}
	}
}

// upperFirst is strings.ToUpper of the first byte for every possible byte,
// so the fast path would stay exact even for a vocabulary that is not
// lower-case ASCII.
func TestUpperFirstMatchesToUpper(t *testing.T) {
	for c := range 256 {
		w := string([]byte{byte(c), 'x'})
		if got, want := upperFirst(w), strings.ToUpper(w[:1]); got != want {
			t.Errorf("upperFirst(%q) = %q, want %q", w, got, want)
		}
	}
	for _, w := range words {
		if got, want := upperFirst(w), strings.ToUpper(w[:1]); got != want {
			t.Errorf("upperFirst(%q) = %q, want %q", w, got, want)
		}
	}
}

// pagePath and imagePath spell numbers as the Sprintf versions did.
func TestPathsMatchSprintf(t *testing.T) {
	for _, pages := range []int{5, 100, 1000, MaxPagesPerHost} {
		s, err := Generate(Config{Seed: int64(pages), PagesPerHost: pages})
		if err != nil {
			t.Fatal(err)
		}
		for _, idx := range []int{1, 2, 7, 9, 10, 99, 100, 101, 999, 12345, pages - 1} {
			for h := range s.cfg.Hosts {
				sec := 1 + (idx-1)%s.sections
				want := fmt.Sprintf("/sec%d/page%d.html", sec, idx)
				if s.hashOf(uint64(h), uint64(idx), saltDeep)%4 == 0 {
					want = fmt.Sprintf("/sec%d/archive/page%d.html", sec, idx)
				}
				if got := s.pagePath(h, idx); got != want {
					t.Errorf("pagePath(%d, %d) = %q, want %q", h, idx, got, want)
				}
			}
		}
	}
	for _, k := range []int{0, 9, 10, 999, 250_000} {
		if got, want := imagePath(k, false), fmt.Sprintf("/img/%d.png", k); got != want {
			t.Errorf("imagePath(%d, false) = %q, want %q", k, got, want)
		}
		if got, want := imagePath(k, true), fmt.Sprintf("/img/%d-2x.png", k); got != want {
			t.Errorf("imagePath(%d, true) = %q, want %q", k, got, want)
		}
	}
}

// fragmentOf replaces the same bytes strings.NewReplacer did.
func TestFragmentOfMatchesReplacer(t *testing.T) {
	r := strings.NewReplacer("/", "-", ".", "-", "?", "-", "=", "-")
	for _, p := range []string{
		"/", "/sec1/page7.html", "/sec2/archive/page40.html?ref=p3", "/a//b..c??d==e/",
		"/x=y?z.w/", "no-slash", "/ünïcode/päge.html", "/\xff/bad.html", "",
	} {
		if got, want := fragmentOf(p), strings.Trim(r.Replace(p), "-")+"x"; got != want {
			t.Errorf("fragmentOf(%q) = %q, want %q", p, got, want)
		}
	}
}

// pageDoc's hash folds extra coordinates onto hashOf(h, idx, salt); that
// equals hashing all of them at once only because hashOf folds in order.
func TestHashOfFoldsInOrder(t *testing.T) {
	s, err := Generate(Config{Seed: 77})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		parts := make([]uint64, 3+rng.IntN(3))
		for i := range parts {
			parts[i] = rng.Uint64()
		}
		v := s.hashOf(parts[:3]...)
		for _, e := range parts[3:] {
			v = mix(v ^ e)
		}
		if want := s.hashOf(parts...); v != want {
			t.Fatalf("hashOf%v = %x, folded %x", parts, want, v)
		}
	}
}
