package uri

import (
	"fmt"
	"strings"
	"time"

	whatwg "github.com/nlnwa/whatwg-url/url"

	"github.com/trawler-crawl/trawler/internal/lru"
)

// DefaultResolverEntries bounds a Resolver's cache when NewResolver is
// given zero: about 2.5 MB of keys and results.
const DefaultResolverEntries = 1 << 13

// Resolver is Resolve with a cache shared by every page a worker extracts.
// The pages of one site repeat their navigation: the same relative
// reference found in many pages of one directory resolves to the same
// URL, and the WHATWG parser costs microseconds a link. It is safe for
// concurrent use.
//
// A result is cached under the base's directory (scheme, authority and
// path up to the last slash) and the reference, which is everything the
// resolution reads unless the reference starts with a query or fragment,
// or is empty after its scheme ("http:?q" reads the base's whole path and
// query): those are resolved every time.
type Resolver struct {
	cache *lru.Cache[string, string]
}

// NewResolver returns a Resolver caching up to entries results (0: the
// default).
func NewResolver(entries int) *Resolver {
	if entries <= 0 {
		entries = DefaultResolverEntries
	}
	return &Resolver{cache: lru.New[string, string](entries)}
}

// Resolve is the package's Resolve, cached. Failures are not cached. A
// single call looks in the cache before it parses the base; ForBase, which
// parses its base once a page, also joins plain links without the cache.
func (r *Resolver) Resolve(base, ref string) (string, error) {
	if key, ok := cacheKey(base, ref); ok {
		if abs, hit := r.cache.Get(key, time.Time{}); hit {
			return abs, nil
		}
	}
	var b parsedBase
	return r.resolve(&b, base, ref)
}

// ForBase returns a Resolve for the links of one page: it parses the base
// once, not once a link.
func (r *Resolver) ForBase() func(base, ref string) (string, error) {
	var b parsedBase
	return func(base, ref string) (string, error) { return r.resolve(&b, base, ref) }
}

// parsedBase keeps the last base seen by a ForBase function: its split for
// fastResolve when it is in normal form, and the parsed base, parsed only
// when a link needs the parser.
type parsedBase struct {
	raw    string
	known  bool
	url    *whatwg.Url
	err    error
	fast   fastBase
	fastOK bool
}

func (b *parsedBase) set(base string) {
	if b.known && b.raw == base {
		return
	}
	*b = parsedBase{raw: base, known: true}
	if IsNormal(base) {
		b.fast, b.fastOK = newFastBase(base)
	}
}

// parsed parses the base on first use.
func (b *parsedBase) parsed() (*whatwg.Url, error) {
	if b.url == nil && b.err == nil {
		b.url, b.err = parse(b.raw)
	}
	return b.url, b.err
}

func (r *Resolver) resolve(b *parsedBase, base, ref string) (string, error) {
	b.set(base)
	if b.fastOK {
		if abs, ok := fastResolve(b.fast, ref); ok {
			return abs, nil
		}
	}
	key, cacheable := cacheKey(base, ref)
	if cacheable {
		if abs, hit := r.cache.Get(key, time.Time{}); hit {
			return abs, nil
		}
	}
	u, err := b.parsed()
	if err != nil {
		return "", fmt.Errorf("base: %w", err)
	}
	abs, err := resolveParsed(u, base, ref)
	if err == nil && cacheable {
		r.cache.Put(key, abs, time.Time{})
	}
	return abs, err
}

// cacheKey returns the cache key of resolving ref against base, and
// whether the result depends only on what the key holds.
func cacheKey(base, ref string) (string, bool) {
	if ref == "" || ref[0] <= ' ' || ref[len(ref)-1] <= ' ' {
		return "", false // the parser trims C0 and space: leave it to it
	}
	rest := ref
	if i := schemeEnd(ref); i > 0 {
		rest = ref[i+1:]
	}
	if rest == "" || rest[0] == '?' || rest[0] == '#' {
		return "", false
	}
	end := len(base)
	if i := strings.IndexAny(base, "?#"); i >= 0 {
		end = i
	}
	slash := strings.LastIndexByte(base[:end], '/')
	if slash < 0 {
		return "", false
	}
	return base[:slash+1] + "\x00" + ref, true
}

// schemeEnd returns the index of the colon ending ref's scheme, or -1 when
// ref does not start with one (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" /
// "-" / "." ) ":").
func schemeEnd(ref string) int {
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i
		default:
			return -1
		}
	}
	return -1
}
