// Package extract finds outlinks in fetched content the way Heritrix's
// ExtractorHTML, ExtractorCSS, ExtractorJS, ExtractorHTTP, ExtractorSitemap
// and ExtractorRobotsTxt do: each link carries the hop letter that scope
// rules judge it by (L navigational, E embed, R redirect/refresh,
// X speculative, M manifest) and an XPath-like context ("a/@href",
// "img/@src", "link[rel='stylesheet']/@href", "Location:", "=JS_MISC",
// "=MANIFEST_MISC").
//
// Extraction is streaming and bounded: at most Options.MaxLinks links and
// Options.MaxBytes bytes of input per document, deduplicated by URL and hop,
// resolved against the document base, with anything that is not http or
// https (javascript:, mailto:, data: ...) dropped. Bad input never panics:
// malformed markup yields whatever links can be recognised.
package extract

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unsafe"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Link is one discovered outlink.
type Link struct {
	URL string
	// Hop is the hop letter (messages.HopLink, messages.HopEmbed, ...).
	Hop byte
	// Context says where the link was found, as Heritrix writes it in
	// WARC metadata outlink lines.
	Context string
}

// Contexts shared with Heritrix for links without an element/attribute.
const (
	// ContextEmbedMisc is Heritrix's context for links found in CSS.
	ContextEmbedMisc = "=EMBED_MISC"
	// ContextMeta is Heritrix's context for meta refresh and meta content.
	ContextMeta = "meta"
)

// Defaults for Options fields left zero.
const (
	// DefaultMaxLinks matches Heritrix's maxOutlinks.
	DefaultMaxLinks = 6000
	// DefaultMaxBytes bounds how much of one document is scanned.
	DefaultMaxBytes = 16 << 20
	// DefaultMaxURLLength matches Heritrix's UURI.MAX_URL_LENGTH; longer
	// URLs are dropped.
	DefaultMaxURLLength = 2083
)

// ResolveFunc resolves ref against the absolute URL base and returns an
// absolute URL. It is a hook so the worker can plug in its canonicaliser.
type ResolveFunc func(base, ref string) (string, error)

// Options bound and configure every extractor.
type Options struct {
	// MaxLinks stops extraction once this many links were found.
	MaxLinks int
	// MaxBytes stops reading the input after this many bytes.
	MaxBytes int64
	// MaxURLLength drops resolved URLs longer than this.
	MaxURLLength int
	// Resolve resolves references; nil means ResolveReference from net/url.
	Resolve ResolveFunc
}

func (o Options) withDefaults() Options {
	if o.MaxLinks <= 0 {
		o.MaxLinks = DefaultMaxLinks
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxURLLength <= 0 {
		o.MaxURLLength = DefaultMaxURLLength
	}
	if o.Resolve == nil {
		o.Resolve = newStdResolver().resolve
	}
	return o
}

// stdResolver resolves with net/url, keeping the last parsed base because
// one document resolves thousands of references against the same base.
type stdResolver struct {
	base   string
	parsed *url.URL
}

func newStdResolver() *stdResolver { return &stdResolver{} }

func (r *stdResolver) resolve(base, ref string) (string, error) {
	if r.parsed == nil || base != r.base {
		b, err := url.Parse(base)
		if err != nil {
			return "", fmt.Errorf("parse base %q: %w", base, err)
		}
		r.base, r.parsed = base, b
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("parse reference %q: %w", ref, err)
	}
	return r.parsed.ResolveReference(u).String(), nil
}

// Resolve is the default ResolveFunc: RFC 3986 resolution with net/url.
func Resolve(base, ref string) (string, error) {
	return newStdResolver().resolve(base, ref)
}

// collector accumulates links for one document.
type collector struct {
	o     Options
	seen  map[linkKey]struct{}
	refs  map[refKey]struct{} // references already judged
	links []Link
	full  bool
}

// refKey is a reference as written, with the base it was resolved
// against: the same reference again resolves the same way, so its first
// verdict (kept, refused or a duplicate) stands without resolving it again.
type refKey struct {
	base, ref string
	hop       byte
}

type linkKey struct {
	url string
	hop byte
}

func newCollector(o Options) *collector {
	return &collector{o: o, seen: map[linkKey]struct{}{}, refs: map[refKey]struct{}{}}
}

// add resolves ref against base and records it unless it is unusable or a
// duplicate. It returns false once MaxLinks is reached.
func (c *collector) add(base, ref string, hop byte, context string) bool {
	if c.full {
		return false
	}
	ref = cleanRef(ref)
	// Resolution never shortens a reference (dot segments aside), so an
	// over-long one is dropped before paying for it.
	if ref == "" || ref[0] == '#' || len(ref) > c.o.MaxURLLength || unwantedScheme(ref) {
		return true
	}
	// Pages repeat their links (navigation, the same target in text and
	// in a table of contents); resolving and parsing one is most of a
	// link's cost here.
	rk := refKey{base, ref, hop}
	if _, again := c.refs[rk]; again {
		return true
	}
	c.refs[rk] = struct{}{}
	abs, err := c.o.Resolve(base, ref)
	if err != nil {
		return true
	}
	if i := strings.IndexByte(abs, '#'); i >= 0 {
		abs = abs[:i]
	}
	if len(abs) > c.o.MaxURLLength || !httpScheme(abs) {
		return true
	}
	// A reference can resolve to text that no longer parses: net/url reads
	// "//0.::" as host "0.::" but refuses "http://0.::" (port "::").
	// Such a link would only fail later, in the frontier or the fetcher.
	k := linkKey{abs, hop}
	if _, dup := c.seen[k]; dup {
		return true
	}
	if _, err := url.Parse(abs); err != nil {
		return true
	}
	c.seen[k] = struct{}{}
	c.links = append(c.links, Link{URL: abs, Hop: hop, Context: context})
	if len(c.links) >= c.o.MaxLinks {
		c.full = true
		return false
	}
	return true
}

// cleanRef trims ASCII whitespace and removes tabs and newlines inside, as
// browsers do with URL attributes.
func cleanRef(s string) string {
	s = strings.Trim(s, " \t\n\r\f")
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

// schemeOf returns the lower-cased scheme of s, or "" if s has none.
func schemeOf(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			if i == 0 {
				return ""
			}
			return strings.ToLower(s[:i])
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return ""
		}
	}
	return ""
}

// unwantedScheme rejects javascript:, mailto:, data: and every other
// non-HTTP scheme before paying for resolution.
func unwantedScheme(ref string) bool {
	s := schemeOf(ref)
	return s != "" && s != "http" && s != "https"
}

func httpScheme(abs string) bool {
	s := schemeOf(abs)
	return s == "http" || s == "https"
}

// limitReader reads at most n bytes and records whether more were there.
// readAll reads what l lets through as a string. The scanners take the
// whole text, which io.ReadAll would build by doubling from 512 bytes
// (each step zeroed and copied) and string() copy once more; a reader
// that knows its size (the worker's bodies, in memory or spooled to a
// file) is read into one buffer of that size, which becomes the string
// without a copy: nothing writes to it afterwards.
func readAll(l *limitReader) (string, error) {
	size := int64(512)
	switch r := l.r.(type) {
	case interface{ Len() int }:
		size = min(int64(r.Len()), l.n) + 1 // +1: the read that sees the end
	case interface{ Size() int64 }:
		size = min(r.Size(), l.n) + 1
	}
	b := make([]byte, 0, max(size, 1))
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := l.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			if len(b) == 0 {
				return "", err
			}
			return unsafe.String(&b[0], len(b)), err
		}
	}
}

type limitReader struct {
	r         io.Reader
	n         int64 // bytes left
	read      int64 // bytes delivered
	truncated bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		if !l.truncated {
			// Peek one byte: only if the input really goes on was it cut.
			// A reader returning (0, nil) is taken to have more.
			var one [1]byte
			n, err := l.r.Read(one[:])
			l.truncated = n > 0 || err == nil
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	l.read += int64(n)
	return n, err
}

// readErr wraps an input failure with its byte position.
func readErr(what string, at int64, err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return fmt.Errorf("extract %s: read failed at byte %d: %w", what, at, err)
}

// Hop letters as bytes, from the messages contract.
const (
	hopLink     byte = messages.HopLink
	hopEmbed    byte = messages.HopEmbed
	hopRedirect byte = messages.HopRedirect
	hopSpec     byte = messages.HopSpeculative
)
