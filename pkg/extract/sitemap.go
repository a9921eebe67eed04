package extract

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// ContextManifestMisc is Heritrix's context for sitemap entries and
// robots.txt Sitemap: lines (LinkContext.MANIFEST_MISC).
const ContextManifestMisc = "=MANIFEST_MISC"

// ErrMalformed marks a document too broken to read further; the links
// found before the fault are still returned.
var ErrMalformed = errors.New("malformed document")

// hopManifest is the sitemap hop letter.
const hopManifest byte = messages.HopManifest

// SitemapInfo describes a parsed sitemap.
type SitemapInfo struct {
	// Index is set for a sitemap index: every link is itself a sitemap,
	// which Heritrix annotates "isSitemap".
	Index bool
	// Truncated is set when MaxBytes (of decompressed data) or MaxLinks
	// stopped extraction early.
	Truncated bool
}

// Sitemap extracts the URLs of a sitemap streamed from r, whose URL is
// base, as Heritrix's ExtractorSitemap does with crawler-commons: the
// <loc> of every urlset/url and sitemapindex/sitemap (any namespace), or
// for a plain-text sitemap every line holding an absolute http(s) URL.
// Like crawler-commons, <loc> values must be absolute. Links have hop M
// and context "=MANIFEST_MISC". Gzip input is recognised by its magic
// bytes and decompressed; at most MaxBytes of decompressed data are read,
// so a gzip bomb only truncates. XML entities other than the predefined
// five are never expanded. Errors: a failed read or broken gzip stream
// (with its position), ErrMalformed for XML that stops making sense (with
// its line) or whose root is not urlset or sitemapindex; links found
// before the error are returned.
func Sitemap(r io.Reader, base string, o Options) ([]Link, SitemapInfo, error) {
	o = o.withDefaults()
	rawLR := &limitReader{r: r, n: o.MaxBytes}
	raw := bufio.NewReader(rawLR)
	var in io.Reader = raw
	zipped := false
	if magic, _ := raw.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return nil, SitemapInfo{}, fmt.Errorf("extract sitemap: gzip header: %w", err)
		}
		defer func() { _ = zr.Close() }() // Close only releases the reader
		in, zipped = zr, true
	}
	lr := &limitReader{r: in, n: o.MaxBytes}
	br := bufio.NewReader(lr)
	s := &sitemapParser{c: newCollector(o), base: base}
	var err error
	if looksLikeXML(br) {
		err = s.xml(br)
	} else {
		err = s.text(br)
	}
	cut := lr.truncated || rawLR.truncated
	info := SitemapInfo{Index: s.index, Truncated: cut || s.c.full}
	switch {
	case err == nil || errors.Is(err, io.EOF):
		err = nil
	case cut && (errors.Is(err, ErrMalformed) || errors.Is(err, io.ErrUnexpectedEOF)):
		err = nil // cut off by MaxBytes, not broken
	case zipped:
		err = fmt.Errorf("extract sitemap: gzip stream broken after %d decompressed bytes: %w", lr.read, err)
	default:
		err = readErr("sitemap", lr.read, err)
	}
	return s.c.links, info, err
}

// looksLikeXML reports whether the first non-blank byte (after a UTF-8
// byte order mark) is '<'.
func looksLikeXML(br *bufio.Reader) bool {
	head, _ := br.Peek(512)
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	head = bytes.TrimLeft(head, " \t\r\n")
	return len(head) > 0 && head[0] == '<'
}

// sitemapParser holds the state of one sitemap.
type sitemapParser struct {
	c     *collector
	base  string
	index bool
}

// addAbsolute records ref if it is an absolute http(s) URL.
func (s *sitemapParser) addAbsolute(ref string) bool {
	ref = strings.TrimSpace(ref)
	if !httpScheme(ref) || !strings.Contains(ref, "://") {
		return true
	}
	return s.c.add(s.base, ref, hopManifest, ContextManifestMisc)
}

// text reads a plain-text sitemap: one URL per line. Overlong lines are
// skipped without being buffered. It returns the input's final error.
func (s *sitemapParser) text(br *bufio.Reader) error {
	maxLine := s.c.o.MaxURLLength + 256
	var line []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !skipping {
			line = append(line, chunk...)
		}
		if len(line) > maxLine {
			line, skipping = line[:0], true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !skipping && !s.addAbsolute(strings.TrimPrefix(string(line), "\ufeff")) {
			return nil
		}
		line, skipping = line[:0], false
		if err != nil {
			return err
		}
	}
}
