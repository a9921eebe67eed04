package extract

import (
	"strings"
)

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// srcsetURLs returns every candidate URL of a srcset value, following the
// HTML parsing rules: candidates are separated by commas, a URL runs to
// the next whitespace (trailing commas belong to the separator), and
// descriptors run to the next comma outside parentheses.
func srcsetURLs(v string) []string {
	var out []string
	i := 0
	for i < len(v) {
		for i < len(v) && (isSpace(v[i]) || v[i] == ',') {
			i++
		}
		start := i
		for i < len(v) && !isSpace(v[i]) {
			i++
		}
		u := v[start:i]
		if u == "" {
			break
		}
		trimmed := strings.TrimRight(u, ",")
		if trimmed != "" {
			out = append(out, trimmed)
		}
		if len(trimmed) < len(u) {
			continue // the comma ended the candidate; no descriptors
		}
		i = skipDescriptors(v, i)
	}
	return out
}

// skipDescriptors advances past "1x", "100w", "(…)" up to and including the
// next top-level comma.
func skipDescriptors(v string, i int) int {
	depth := 0
	for ; i < len(v); i++ {
		switch v[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// refreshURL returns the URL of a refresh directive such as
// "5; url='/next'", "0;URL=/x" or "3, /y", or "" if there is none.
func refreshURL(content string) string {
	s := strings.TrimLeft(content, " \t\n\r\f")
	s = strings.TrimLeft(s, "0123456789.")
	s = strings.TrimLeft(s, " \t\n\r\f")
	if s != "" && (s[0] == ';' || s[0] == ',') {
		s = s[1:]
	}
	s = strings.TrimLeft(s, " \t\n\r\f")
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		rest := strings.TrimLeft(s[3:], " \t\n\r\f")
		if rest != "" && rest[0] == '=' {
			s = strings.TrimLeft(rest[1:], " \t\n\r\f")
		}
	}
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		s = s[1:]
		if j := strings.IndexByte(s, q); j >= 0 {
			s = s[:j]
		}
	}
	return strings.TrimSpace(s)
}

// relHop classifies a rel attribute (of <link> or a Link header) as
// Heritrix does: resources a page needs are embeds, connection hints and
// pingbacks give nothing, anything else is a navigational link. ctx is
// prefix + ("[rel='x']" for embeds) + suffix.
func relHop(rel, prefix, suffix string) (hop byte, ctx string, ok bool) {
	nav := false
	for _, tok := range strings.Fields(strings.ToLower(rel)) {
		switch tok {
		case "icon", "stylesheet", "modulepreload", "prefetch", "prerender", "preload",
			"apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon", "manifest":
			return hopEmbed, prefix + "[rel='" + tok + "']" + suffix, true
		case "pingback":
			return 0, "", false
		case "dns-prefetch", "preconnect", "shortcut":
			// connection hints; "shortcut" only qualifies "icon"
		default:
			nav = true
		}
	}
	if nav {
		return hopLink, prefix + suffix, true
	}
	return 0, "", false
}
