package extract

import (
	"net/http"
	"strings"
)

// Headers extracts links from HTTP response headers, as Heritrix's
// ExtractorHTTP does: Location, Content-Location and Refresh are redirects
// (R) with contexts "Location:", "Content-Location:" and "Refresh:"; each
// Link header target is an embed or a link by its rel, with context
// "Link:" or "Link[rel='x']:". base is the URL that was fetched.
func Headers(h http.Header, base string, o Options) []Link {
	c := newCollector(o.withDefaults())
	for _, name := range []string{"Location", "Content-Location"} {
		for _, v := range h.Values(name) {
			c.add(base, v, hopRedirect, name+":")
		}
	}
	for _, v := range h.Values("Refresh") {
		if u := refreshURL(v); u != "" {
			c.add(base, u, hopRedirect, "Refresh:")
		}
	}
	for _, v := range h.Values("Link") {
		for _, lv := range parseLinkHeader(v) {
			rel := lv.rel
			if !lv.hasRel {
				rel = "related" // a Link without rel is still a link
			}
			if hop, ctx, ok := relHop(rel, "Link", ":"); ok {
				c.add(base, lv.target, hop, ctx)
			}
		}
	}
	return c.links
}

// linkValue is one <target>; params element of a Link header (RFC 8288).
type linkValue struct {
	target string
	rel    string
	hasRel bool
}

// parseLinkHeader splits a Link header value into its elements. Malformed
// elements are skipped.
func parseLinkHeader(v string) []linkValue {
	var out []linkValue
	i := 0
	for i < len(v) {
		for i < len(v) && (isSpace(v[i]) || v[i] == ',') {
			i++
		}
		if i >= len(v) {
			break
		}
		if v[i] != '<' {
			i = skipLinkElement(v, i)
			continue
		}
		end := strings.IndexByte(v[i:], '>')
		if end < 0 {
			break
		}
		lv := linkValue{target: v[i+1 : i+end]}
		i = parseLinkParams(v, i+end+1, &lv)
		out = append(out, lv)
	}
	return out
}

// parseLinkParams reads ;name=value parameters up to the next element.
func parseLinkParams(v string, i int, lv *linkValue) int {
	for i < len(v) {
		i = skipSpace(v, i)
		if i >= len(v) || v[i] == ',' {
			return i
		}
		if v[i] != ';' {
			return skipLinkElement(v, i)
		}
		i = skipSpace(v, i+1)
		start := i
		for i < len(v) && v[i] != '=' && v[i] != ';' && v[i] != ',' && !isSpace(v[i]) {
			i++
		}
		name := strings.ToLower(v[start:i])
		i = skipSpace(v, i)
		val := ""
		if i < len(v) && v[i] == '=' {
			val, i = linkParamValue(v, skipSpace(v, i+1))
		}
		if name == "rel" && !lv.hasRel {
			lv.rel, lv.hasRel = val, true
		}
	}
	return i
}

// linkParamValue reads a token or quoted-string parameter value.
func linkParamValue(v string, i int) (string, int) {
	if i < len(v) && v[i] == '"' {
		var b strings.Builder
		for i++; i < len(v); i++ {
			switch v[i] {
			case '\\':
				if i+1 < len(v) {
					i++
					b.WriteByte(v[i])
				}
			case '"':
				return b.String(), i + 1
			default:
				b.WriteByte(v[i])
			}
		}
		return b.String(), i
	}
	start := i
	for i < len(v) && v[i] != ';' && v[i] != ',' && !isSpace(v[i]) {
		i++
	}
	return v[start:i], i
}

// skipLinkElement skips to after the next comma outside quotes.
func skipLinkElement(v string, i int) int {
	inQuote := false
	for ; i < len(v); i++ {
		switch v[i] {
		case '"':
			inQuote = !inQuote
		case '\\':
			if inQuote {
				i++
			}
		case ',':
			if !inQuote {
				return i + 1
			}
		}
	}
	return i
}
