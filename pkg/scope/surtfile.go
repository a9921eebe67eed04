package scope

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/trawler-crawl/trawler/pkg/surt"
)

// LineError reports a bad line of a SURT-prefix source, with its position.
type LineError struct {
	Source string // file name, or the profile key for inline lists
	Line   int    // 1-based
	Text   string // the offending line, trimmed
	Reason string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %s (%q)", e.Source, e.Line, e.Reason, e.Text)
}

// maxLineBytes bounds one line of a SURT file; longer lines are errors, not
// a reason to buffer without limit.
const maxLineBytes = 64 << 10

// ParsePrefixes reads a SURT-prefix source in the format of Heritrix's
// SurtPrefixSet.importFromMixed (ARCHITECTURE.md 9):
//
//	# comment, and blank lines, are ignored
//	+http://(uk,co,example,     a literal SURT prefix
//	+uk                         "+" and a host or URL: its implied prefix
//	http://www.example.org/a/   a URL: its implied prefix (…/a/)
//	https://example.org         https is folded to http, like every SURT here
//
// One entry per line; a "#" after whitespace starts a trailing comment.
// Any other line is an error naming source and line, and no prefixes are
// returned, so a caller reloading a file can keep its previous set.
func ParsePrefixes(r io.Reader, source string) ([]string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", source, err)
	}
	return parsePrefixBytes(b, source)
}

// parallelLines is the size from which a source is parsed on every CPU:
// URL lines cost a WHATWG parse each, which dominates loading a large
// scope.
const parallelLines = 20_000

func parsePrefixBytes(b []byte, source string) ([]string, error) {
	b = bytes.TrimPrefix(b, []byte("\ufeff")) // tolerate a UTF-8 byte-order mark
	lines := strings.Split(string(b), "\n")
	workers := runtime.GOMAXPROCS(0)
	if len(lines) < parallelLines || workers < 2 {
		return parseLines(lines, 0, source)
	}
	chunk := (len(lines) + workers - 1) / workers
	results := make([][]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(lines))
		if lo >= hi {
			break
		}
		wg.Go(func() { results[w], errs[w] = parseLines(lines[lo:hi], lo, source) })
	}
	wg.Wait()
	n := 0
	for w := range workers {
		if errs[w] != nil {
			return nil, errs[w] // chunks are in file order: the first error is the earliest line
		}
		n += len(results[w])
	}
	out := make([]string, 0, n)
	for _, r := range results {
		out = append(out, r...)
	}
	return out, nil
}

// parseLines parses lines whose first is line first+1 of the source.
func parseLines(lines []string, first int, source string) ([]string, error) {
	out := make([]string, 0, len(lines))
	for i, line := range lines {
		if len(line) > maxLineBytes {
			return nil, &LineError{Source: source, Line: first + i + 1, Text: line[:80] + "…",
				Reason: fmt.Sprintf("line longer than %d bytes", maxLineBytes)}
		}
		p, ok, err := PrefixFromLine(line)
		if err != nil {
			return nil, &LineError{Source: source, Line: first + i + 1, Text: strings.TrimSpace(line), Reason: err.Error()}
		}
		if ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// PrefixFromLine interprets one line of a SURT-prefix source. ok is false
// for blank and comment lines.
func PrefixFromLine(line string) (prefix string, ok bool, err error) {
	entry := strings.TrimSpace(line)
	if entry == "" || strings.HasPrefix(entry, "#") {
		return "", false, nil
	}
	if i := strings.IndexAny(entry, " \t"); i >= 0 {
		rest := strings.TrimSpace(entry[i:])
		if !strings.HasPrefix(rest, "#") {
			return "", false, errors.New("more than one entry on the line")
		}
		entry = entry[:i]
	}
	switch {
	case strings.HasPrefix(entry, "-"):
		return "", false, errors.New(`"-" lines are not supported: list excluded prefixes in the exclusion file with "+"`)
	case strings.HasPrefix(entry, "+"):
		entry = entry[1:]
		if entry == "" {
			return "", false, errors.New(`"+" with nothing after it`)
		}
		if strings.Index(entry, "(") > 0 {
			p, err := literalPrefix(entry)
			return p, err == nil, err
		}
	case strings.Contains(entry, "://("):
		return "", false, errors.New(`looks like a SURT prefix: write literal prefixes with a leading "+"`)
	}
	p, err := impliedPrefix(entry)
	return p, err == nil, err
}

// literalPrefix checks and normalises a "+scheme://(…" entry: lowercased,
// https folded to http, as SurtPrefixSet.considerAsAddDirective does.
func literalPrefix(s string) (string, error) {
	scheme, rest, found := strings.Cut(s, "://(")
	if !found || scheme == "" || !isScheme(scheme) {
		return "", errors.New(`malformed SURT prefix: want scheme://(reversed,host,…`)
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] >= 0x80 {
			return "", errors.New("non-ASCII host in a SURT prefix: use the punycode (xn--) form, or a URL line")
		}
	}
	return foldHTTPS(strings.ToLower(s)), nil
}

// impliedPrefix is the prefix a URL or host implies, refusing strings from
// which no SURT can be built (Heritrix would silently add garbage).
func impliedPrefix(s string) (string, error) {
	p := surt.ImpliedPrefix(s)
	if !strings.Contains(p, "://(") || strings.ContainsAny(p, " \t") {
		return "", errors.New("cannot derive a SURT prefix: not a URL or host name")
	}
	return p, nil
}

func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

func foldHTTPS(s string) string {
	if rest, ok := strings.CutPrefix(s, "https://"); ok {
		return "http://" + rest
	}
	return s
}

// toDomain turns a prefix into the domain prefix OnDomainsDecideRule uses
// (SurtPrefixSet.convertPrefixToDomain): everything from ")" is dropped and
// a final "www," too, so "http://(uk,co,example,www,)/a/" becomes
// "http://(uk,co,example,", which admits every subdomain.
func toDomain(p string) string {
	if i := strings.IndexByte(p, ')'); i >= 0 {
		p = p[:i]
	}
	return strings.TrimSuffix(p, "www,")
}

// toHost turns a prefix into the exact-host prefix OnHostsDecideRule uses
// (SurtPrefixSet.convertPrefixToHost): the path is dropped, and an open
// domain prefix is closed, so "http://(org,example," becomes
// "http://(org,example,)".
func toHost(p string) string {
	if strings.HasSuffix(p, ")") {
		return p
	}
	if i := strings.IndexByte(p, ')'); i >= 0 {
		return p[:i+1]
	}
	if !strings.HasSuffix(p, ",") {
		p += ","
	}
	return p + ")"
}
