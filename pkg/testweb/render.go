package testweb

import (
	"bytes"
	"fmt"
	"html"
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// renderHTML writes document d as it is served at epoch.
func (s *Site) renderHTML(b *bytes.Buffer, d *htmlDoc, epoch int, auth authFunc) {
	start := b.Len()
	r := d.res
	rng := s.rngFor(uint64(r.host), pathKey(r.path), saltText)
	h, dir := r.host, d.baseDir()
	attr := func(x ref) string { return html.EscapeString(x.write(h, dir, auth)) }
	heading := title(rng)
	if r.kind == kindCalendar {
		heading = fmt.Sprintf("Calendar %04d-%02d", r.idx/12, r.idx%12+1)
	}
	fmt.Fprintf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s | %s</title>\n",
		html.EscapeString(heading), s.HostName(h))
	if d.base != "" {
		fmt.Fprintf(b, "<base href=\"%s\">\n", attr(ref{target{h, d.base}, d.baseForm}))
	}
	for _, x := range d.styles {
		fmt.Fprintf(b, "<link rel=\"stylesheet\" href=\"%s\">\n", attr(x))
	}
	for _, x := range d.scripts {
		fmt.Fprintf(b, "<script src=\"%s\"></script>\n", attr(x))
	}
	fmt.Fprintf(b, "</head>\n<body>\n<h1 id=\"top\">%s</h1>\n", html.EscapeString(heading))
	paragraph(b, rng)
	for _, img := range d.images {
		fmt.Fprintf(b, "<img src=\"%s\" alt=\"%s\"", attr(img.src), words[rng.IntN(len(words))])
		if len(img.srcset) > 0 {
			parts := make([]string, len(img.srcset))
			for i, c := range img.srcset {
				parts[i] = c.ref.write(h, dir, auth) + " " + c.desc
			}
			fmt.Fprintf(b, " srcset=\"%s\"", html.EscapeString(strings.Join(parts, ", ")))
		}
		b.WriteString(">\n")
	}
	b.WriteString("<ul>\n")
	for _, x := range d.links {
		// Plain writes, not Fprintf: this runs for every link of every page.
		b.WriteString("<li><a href=\"")
		b.WriteString(attr(x))
		b.WriteString("\">")
		b.WriteString(html.EscapeString(title(rng)))
		b.WriteString("</a></li>\n")
	}
	b.WriteString("</ul>\n")
	if r.kind != kindCalendar && s.volatile(h, r.path) {
		// The only epoch-dependent part of any document.
		rev := s.rngFor(uint64(h), pathKey(r.path), uint64(epoch), saltText)
		fmt.Fprintf(b, "<p class=\"revision\">Revision %d. ", epoch)
		paragraphText(b, rev)
		b.WriteString("</p>\n")
	}
	paragraph(b, rng)
	for s.cfg.PageBytes > 0 && b.Len()-start < s.cfg.PageBytes {
		paragraph(b, rng)
	}
	if d.toTop {
		b.WriteString("<p><a href=\"#top\">Back to top</a></p>\n")
	}
	b.WriteString("</body>\n</html>\n")
}

// paragraph writes a <p> of a few random sentences.
func paragraph(b *bytes.Buffer, rng *rand.Rand) {
	b.WriteString("<p>")
	paragraphText(b, rng)
	b.WriteString("</p>\n")
}

// paragraphText writes two to six random sentences. It writes straight
// into b: padded benchmark pages are mostly this text, so a builder copy
// and an upper-cased string per sentence would dominate their rendering.
func paragraphText(b *bytes.Buffer, rng *rand.Rand) {
	n := 2 + rng.IntN(5)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		k := 4 + rng.IntN(10)
		for j := range k {
			w := words[rng.IntN(len(words))]
			if j == 0 {
				b.WriteString(upperFirst(w))
				w = w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteByte('.')
	}
}

// upperFirst returns strings.ToUpper(w[:1]) without allocating when w
// starts with an ASCII byte, as every word does.
func upperFirst(w string) string {
	switch c := w[0]; {
	case c >= utf8.RuneSelf:
		return strings.ToUpper(w[:1]) // a lone non-ASCII byte becomes U+FFFD
	case 'a' <= c && c <= 'z':
		return asciiUpper[c-'a' : c-'a'+1]
	default:
		return w[:1]
	}
}

// asciiUpper holds the upper-case letters upperFirst slices from.
const asciiUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
