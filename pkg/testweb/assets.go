package testweb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"image"
	"image/png"
	"sync"
	"time"
)

// cssSyntax is how a style-sheet reference is written.
type cssSyntax uint8

const (
	cssImportURL    cssSyntax = iota // @import url("x");
	cssImportString                  // @import "x" print;
	cssURL                           // background-image: url(x)
	cssFont                          // @font-face { src: url(x) }
)

// cssItem is one reference in a style sheet.
type cssItem struct {
	syntax cssSyntax
	quote  string // "", "'" or "\"" around url() arguments
	ref    ref
}

// cssItems lists the references of style sheet which (0 site, 1 base,
// 2 print) on host h. site.css imports the other two; /img/missing.png is a
// deliberate 404.
func cssItems(h, which int) []cssItem {
	t := func(p string) target { return target{h, p} }
	switch which {
	case 0:
		return []cssItem{
			{cssImportURL, "\"", ref{t(pathCSSBase), formRelative}},
			{cssImportString, "", ref{t(pathCSSPrint), formRoot}},
			{cssURL, "", ref{t(namedImages[0]), formRelative}},
			{cssURL, "'", ref{t(namedImages[1]), formRoot}},
			{cssURL, "", ref{t(pathMissingImage), formRoot}},
		}
	case 1:
		return []cssItem{
			{cssURL, "\"", ref{t(namedImages[2]), formAbsolute}},
			{cssFont, "", ref{t(pathFont), formRelative}},
		}
	default:
		return []cssItem{{cssURL, "", ref{t(namedImages[3]), formProtocol}}}
	}
}

// renderCSS writes style sheet which of host h.
func renderCSS(b *bytes.Buffer, h, which int, auth authFunc) {
	fmt.Fprintf(b, "/* %s */\n", []string{pathCSSSite, pathCSSBase, pathCSSPrint}[which])
	for i, it := range cssItems(h, which) {
		u := it.ref.write(h, "/css/", auth)
		switch it.syntax {
		case cssImportURL:
			fmt.Fprintf(b, "@import url(%s%s%s);\n", it.quote, u, it.quote)
		case cssImportString:
			fmt.Fprintf(b, "@import \"%s\" print;\n", u)
		case cssFont:
			fmt.Fprintf(b, "@font-face {\n  font-family: Site;\n  src: url(%s%s%s) format(\"woff2\");\n}\n", it.quote, u, it.quote)
		default:
			fmt.Fprintf(b, ".r%d {\n  color: #%06x;\n  background-image: url(%s%s%s);\n}\n", i, (which*7+i)*0x1f3a5, it.quote, u, it.quote)
		}
	}
	b.WriteString("body {\n  margin: 0 auto;\n  max-width: 40em;\n  font-family: Site, serif;\n}\n")
}

// appJS is the only script. It deliberately contains no string literals,
// so speculative JavaScript link extraction finds nothing in it.
const appJS = `(function () {
  var clicks = 0;
  function count() {
    clicks += 1;
    return clicks;
  }
  document.onclick = count;
})();
`

// renderRobots writes robots.txt: a group for another agent that would
// exclude everything (a crawler must not apply it to itself), the
// Disallow of /private/ for everyone, and two Sitemap lines.
func (s *Site) renderRobots(b *bytes.Buffer, h int, auth authFunc) {
	fmt.Fprintf(b, "# robots.txt for %s\nUser-agent: BadBot\nDisallow: /\n\nUser-agent: *\nDisallow: %s\n\n", s.HostName(h), privatePrefix)
	for _, r := range robotsRefs(h) {
		fmt.Fprintf(b, "Sitemap: %s\n", r.to.url(auth))
	}
}

// robotsRefs lists the sitemaps named in robots.txt.
func robotsRefs(h int) []ref {
	return []ref{{target{h, pathSitemap}, formAbsolute}, {target{h, pathSitemapIndex}, formAbsolute}}
}

// sitemapRefs lists the references of sitemap which (see kindSitemap).
func (s *Site) sitemapRefs(h, which int) []ref {
	if which == 1 {
		return []ref{{target{h, pathSitemapPart1}, formAbsolute}, {target{h, pathSitemapPart2}, formAbsolute}}
	}
	ts := s.sitemapEntries(h, which)
	out := make([]ref, len(ts))
	for i, t := range ts {
		out[i] = ref{t, formAbsolute}
	}
	return out
}

// renderSitemap writes sitemap which of host h at epoch; part 2 is gzipped.
func (s *Site) renderSitemap(b *bytes.Buffer, h, which, epoch int, auth authFunc) error {
	var x bytes.Buffer
	x.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	if which == 1 {
		x.WriteString("<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
		for _, r := range s.sitemapRefs(h, which) {
			fmt.Fprintf(&x, "  <sitemap><loc>%s</loc></sitemap>\n", r.to.url(auth))
		}
		x.WriteString("</sitemapindex>\n")
	} else {
		x.WriteString("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
		for _, r := range s.sitemapRefs(h, which) {
			res := s.route(r.to.host, r.to.path)
			lm := s.lastModified(res, epoch).Format(time.DateOnly)
			fmt.Fprintf(&x, "  <url><loc>%s</loc><lastmod>%s</lastmod></url>\n", r.to.url(auth), lm)
		}
		x.WriteString("</urlset>\n")
	}
	if which != 3 {
		_, err := b.Write(x.Bytes())
		return err
	}
	zw := gzip.NewWriter(b) // no ModTime in the header: output is deterministic
	if _, err := zw.Write(x.Bytes()); err != nil {
		return fmt.Errorf("gzip sitemap: %w", err)
	}
	return zw.Close()
}

// renderPNG writes a small solid-colour PNG whose colour derives from the
// path; 2x variants are twice the size.
func (s *Site) renderPNG(b *bytes.Buffer, h int, p string) error {
	v := s.hashOf(uint64(h), pathKey(p), saltImage)
	side := 4
	if len(p) > 7 && p[len(p)-7:] == "-2x.png" {
		side = 8
	}
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	c := [4]uint8{uint8(v), uint8(v >> 8), uint8(v >> 16), 255}
	for i := 0; i < len(img.Pix); i += 4 {
		copy(img.Pix[i:i+4], c[:])
	}
	// png.Encode would allocate a fresh deflate compressor (hundreds of KB)
	// for these few bytes; the pool reuses one at the same level, so the
	// output is unchanged.
	enc := png.Encoder{CompressionLevel: png.DefaultCompression, BufferPool: &s.pngBuffers}
	if err := enc.Encode(b, img); err != nil {
		return fmt.Errorf("encode png %s: %w", p, err)
	}
	return nil
}

// pngBufferPool is a png.EncoderBufferPool shared by concurrent requests.
// Its zero value is ready to use.
type pngBufferPool struct{ pool sync.Pool }

// Get returns a pooled encoder buffer, or nil to let the encoder make one.
func (p *pngBufferPool) Get() *png.EncoderBuffer {
	eb, _ := p.pool.Get().(*png.EncoderBuffer)
	return eb
}

// Put returns an encoder buffer to the pool.
func (p *pngBufferPool) Put(eb *png.EncoderBuffer) { p.pool.Put(eb) }

// renderFont writes pseudo font bytes: a WOFF2 signature and noise.
func (s *Site) renderFont(b *bytes.Buffer, h int) {
	rng := s.rngFor(uint64(h), saltFont)
	b.WriteString("wOF2")
	for range 252 {
		b.WriteByte(byte(rng.Uint32()))
	}
}

// siteEpoch is the Last-Modified time of unchanged content; each epoch of a
// volatile document adds one day.
func siteEpoch() time.Time { return time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC) }

// lastModified is the Last-Modified time of r at epoch.
func (s *Site) lastModified(r resource, epoch int) time.Time {
	days := int(s.hashOf(uint64(r.host), pathKey(r.path), saltLastMod) % 365)
	return siteEpoch().AddDate(0, 0, days+s.version(r, epoch))
}

// etag is the entity tag of r at epoch; it changes exactly when the
// content does.
func (s *Site) etag(r resource, epoch int) string {
	return fmt.Sprintf("\"%016x\"", s.hashOf(uint64(r.host), pathKey(r.path), uint64(s.version(r, epoch)), saltETag))
}
