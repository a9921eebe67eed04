package extract

import "strings"

// plausibleGuess is Trawler's test on top of ExtractorJS's: of the string
// literals Heritrix calls "very likely" URIs (lit as written in the
// script, ref what jsCandidate made of it), it keeps those a script uses
// as links and drops the identifiers that merely look like them. Heritrix
// fetches every one; on a Sphinx documentation site of 526 pages that was
// over 6,000 guessed URIs answering 404 (from its search index: module
// paths such as "os.path", document names such as "c-api/abstract",
// source names such as "library/os.rst"), and dotted names such as
// "logging.info" became host names (http://logging.info/) in other
// people's domains. The rules:
//
//   - An absolute URL as written is kept, unless it is a well-known XML
//     namespace name (http://www.w3.org/2000/svg), which scripts compare,
//     not fetch.
//   - A bare host name that only Heritrix's fix-up made absolute
//     ("example.com" → http://example.com) is kept when it has a path
//     ("example.com/page") or starts with "www."; "os.name" and
//     "typing.io" are identifiers.
//   - A rooted ("/x") or dot-relative ("./x", "../x") reference is kept:
//     scripts write paths so on purpose.
//   - A bare relative reference ("x.html", "img/x.png") is kept only when
//     its last path segment ends in a file extension the web serves
//     (webExtension): "turtle.begin_poly", "c-api/abstract",
//     "library/os.rst" and "index/" are names, not links.
func plausibleGuess(lit, ref string) bool {
	switch {
	case ref == "":
		return false
	case strings.HasPrefix(ref, "//"):
		return !namespaceName(ref[2:])
	case schemeOf(ref) != "":
		if u := unescapeJS(lit); hostGuess(u) {
			return strings.IndexByte(u, '/') >= 0 || hasPrefixFold(u, "www.")
		}
		_, rest, _ := strings.Cut(ref, "//")
		return !namespaceName(rest)
	case ref[0] == '/' || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../"):
		return true
	}
	return webExtension(extensionOf(ref))
}

// hostGuess reports whether the unescaped literal u names no scheme of
// its own, so that an absolute candidate made from it is Heritrix's guess
// that it starts with a host name. A percent-encoded scheme
// (http%3A%2F%2F…) counts as written.
func hostGuess(u string) bool {
	u = strings.TrimSpace(u)
	return schemeOf(u) == "" && !strings.HasPrefix(u, "//") &&
		!hasPrefixFold(u, "http%3A") && !hasPrefixFold(u, "https%3A")
}

// extensionOf returns the lower-cased extension (without the dot) of the
// last path segment of a relative reference, ignoring query and fragment,
// or "" when it has none.
func extensionOf(ref string) string {
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		ref = ref[:i]
	}
	seg := ref[strings.LastIndexByte(ref, '/')+1:]
	dot := strings.LastIndexByte(seg, '.')
	if dot < 0 || dot == len(seg)-1 {
		return ""
	}
	ext := seg[dot+1:]
	if len(ext) > maxExtension {
		return ""
	}
	var buf [maxExtension]byte
	for i := 0; i < len(ext); i++ {
		c := ext[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return string(buf[:len(ext)])
}

// maxExtension is the longest extension webExtension knows.
const maxExtension = len("webmanifest")
