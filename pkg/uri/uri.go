// Package uri parses and normalises the URLs Trawler crawls, following the
// WHATWG URL standard (the parser browsers use), so that a link resolves the
// same way in the crawler as in the browser that renders the page.
//
// Only http and https URLs are crawlable; other schemes (javascript:, mailto:,
// data:, ...) are reported with ErrUnsupportedScheme so callers can drop them
// without treating them as malformed. dns: URIs are internal to the crawler
// and handled by their callers, not here.
package uri

import (
	"errors"
	"fmt"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// ErrUnsupportedScheme reports a well-formed URL whose scheme Trawler does not
// crawl. Test for it with errors.Is.
var ErrUnsupportedScheme = errors.New("unsupported scheme")

// ErrEmpty reports an empty (or all-whitespace) URL.
var ErrEmpty = errors.New("empty URL")

// Normalize parses raw as an absolute URL and returns its normal form: the
// fragment dropped, the host lowercased and IDN hosts punycoded, the default
// port removed, dot segments resolved and unsafe characters percent-encoded as
// the WHATWG standard prescribes. Only http and https are accepted.
func Normalize(raw string) (string, error) {
	u, err := parse(raw)
	if err != nil {
		return "", err
	}
	return u.Href(true), nil
}

// Resolve resolves ref against base (as a browser resolves a link found in
// the page at base) and returns the normalised absolute URL. base must be an
// http or https URL; a result with another scheme fails with
// ErrUnsupportedScheme.
func Resolve(base, ref string) (string, error) {
	b, err := parse(base)
	if err != nil {
		return "", fmt.Errorf("base: %w", err)
	}
	return resolveParsed(b, base, ref)
}

// resolveParsed resolves ref against b, the parsed form of base.
func resolveParsed(b *whatwg.Url, base, ref string) (string, error) {
	u, err := b.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("resolve %q against %q: %w", ref, base, err)
	}
	if err := checkCrawlable(u, ref); err != nil {
		return "", err
	}
	return u.Href(true), nil
}

// Host returns the normalised host name of an http or https URL, without the
// port. IPv6 literals keep their brackets, as in the URL.
func Host(raw string) (string, error) {
	u, err := parse(raw)
	if err != nil {
		return "", err
	}
	return u.Hostname(), nil
}

// Authority returns the normalised host[:port] of an http or https URL; the
// port appears only when it is explicit and not the scheme's default.
func Authority(raw string) (string, error) {
	u, err := parse(raw)
	if err != nil {
		return "", err
	}
	return u.Host(), nil
}

// Parse parses an http or https URL with the WHATWG parser and returns the
// parsed value, for callers that need its components.
func Parse(raw string) (*whatwg.Url, error) {
	return parse(raw)
}

func parse(raw string) (*whatwg.Url, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, ErrEmpty
	}
	u, err := whatwg.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse URL %q: %w", raw, err)
	}
	if err := checkCrawlable(u, raw); err != nil {
		return nil, err
	}
	return u, nil
}

func checkCrawlable(u *whatwg.Url, raw string) error {
	switch u.Scheme() {
	case "http", "https":
	default:
		return fmt.Errorf("URL %q: scheme %q: %w", raw, u.Scheme(), ErrUnsupportedScheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("URL %q: no host", raw)
	}
	return nil
}
