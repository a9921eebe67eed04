package extract

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxXMLDepth bounds the element names remembered; deeper elements are
// only counted, since a <loc> that deep is not a sitemap entry anyway.
const maxXMLDepth = 16

// xml reads an XML sitemap with encoding/xml in non-strict mode, which
// passes undefined entities through literally: entity expansion attacks
// ("billion laughs") cannot expand. Element names are compared by local
// name, so any namespace (or none) is accepted. It returns the input's
// final error, or an ErrMalformed one.
func (s *sitemapParser) xml(br *bufio.Reader) error {
	d := xml.NewDecoder(br)
	d.Strict = false
	// Sitemaps must be UTF-8; others declared are read as if they were,
	// which keeps ASCII URLs intact.
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	var stack []string
	depth := 0
	var loc []byte
	inLoc := false
	for {
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) && depth > 0 {
			line, _ := d.InputPos()
			return fmt.Errorf("extract sitemap: %w: XML line %d: document ends inside <%s>",
				ErrMalformed, line, stack[min(depth, len(stack))-1])
		}
		if err != nil {
			return s.xmlErr(d, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if err := s.root(t.Name.Local); err != nil {
					return err
				}
			}
			inLoc = t.Name.Local == "loc" && depth > 0 && depth <= len(stack) && s.entry(stack[depth-1])
			loc = loc[:0]
			if depth < maxXMLDepth {
				stack = append(stack, t.Name.Local)
			}
			depth++
		case xml.CharData:
			if inLoc && len(loc) <= s.c.o.MaxURLLength+256 {
				loc = append(loc, t...)
			}
		case xml.EndElement:
			if inLoc && len(loc) <= s.c.o.MaxURLLength+256 && !s.addAbsolute(string(loc)) {
				return nil
			}
			inLoc = false
			if depth--; depth <= 0 {
				return nil // the document element ended; trailing junk is ignored
			}
			if depth < len(stack) {
				stack = stack[:depth]
			}
		}
	}
}

// root checks the document element and notes whether this is an index.
func (s *sitemapParser) root(name string) error {
	switch name {
	case "urlset":
	case "sitemapindex":
		s.index = true
	default:
		return fmt.Errorf("extract sitemap: %w: root element <%s> is not urlset or sitemapindex", ErrMalformed, name)
	}
	return nil
}

// entry reports whether a <loc> inside parent is a sitemap entry.
func (s *sitemapParser) entry(parent string) bool {
	if s.index {
		return parent == "sitemap"
	}
	return parent == "url"
}

// xmlErr turns the decoder's final error into Sitemap's contract.
func (s *sitemapParser) xmlErr(d *xml.Decoder, err error) error {
	var syn *xml.SyntaxError
	if !errors.As(err, &syn) {
		return err
	}
	line, col := d.InputPos()
	return fmt.Errorf("extract sitemap: %w: XML line %d column %d: %s", ErrMalformed, line, col, syn.Msg)
}

// LooksLikeSitemap reports whether a response is worth handing to Sitemap
// when nothing else (a robots.txt Sitemap: line, an index) said it is
// one: its MIME type is XML, gzip or unknown, and the document element
// found in head, the first bytes of the body (gzip decompressed), is
// urlset or sitemapindex. Heritrix's ExtractorSitemap sniffs the same way.
// Plain-text sitemaps cannot be recognised by their content.
func LooksLikeSitemap(mime string, head []byte) bool {
	mime = strings.ToLower(mime)
	if mime != "" && !strings.Contains(mime, "xml") && !strings.Contains(mime, "gzip") &&
		!strings.HasPrefix(mime, "application/octet-stream") {
		return false
	}
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(head))
		if err != nil {
			return false
		}
		plain := make([]byte, 4096)
		n, _ := io.ReadFull(zr, plain) // a truncated stream still yields its start
		head = plain[:n]
	}
	d := xml.NewDecoder(bytes.NewReader(head))
	d.Strict = false
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	for {
		tok, err := d.RawToken()
		if err != nil {
			return false
		}
		if t, ok := tok.(xml.StartElement); ok {
			return t.Name.Local == "urlset" || t.Name.Local == "sitemapindex"
		}
	}
}

// Refs resolves raw references found outside any document body (the
// worker's robots.txt Sitemap: lines, with hop M and context
// "=MANIFEST_MISC") against base, dropping unusable ones and duplicates
// and stopping at MaxLinks, exactly as the document extractors do.
func Refs(base string, refs []string, hop byte, context string, o Options) []Link {
	c := newCollector(o.withDefaults())
	for _, ref := range refs {
		if !c.add(base, ref, hop, context) {
			break
		}
	}
	return c.links
}
