package testweb

import (
	"strings"
)

// Special host indexes for targets that are not site hosts.
const (
	hostHostile = -1 // hostile.test
	hostLiteral = -2 // path holds a complete URL or URI that is never served
)

// target is where a reference points: a host and a path (with query, no
// fragment). It is the identity a crawler fetches, independent of the text
// used to write the reference.
type target struct {
	host int
	path string
}

// form is how a reference is written in a document. All forms of the same
// target resolve to the same URL (fragments and whitespace are dropped).
type form uint8

const (
	formRoot     form = iota // /dir/page.html
	formAbsolute             // http://host:port/dir/page.html
	formRelative             // ../dir/page.html, relative to the base
	formDot                  // ./page.html: relative with an explicit ./
	formProtocol             // //host:port/dir/page.html
	formFragment             // /dir/page.html#frag
	formSpaced               // "  /dir/page.html  " (parsers trim it)
	numForms
)

// ref is one outgoing reference of a resource, for rendering and for the
// reachability oracle alike.
type ref struct {
	to   target
	form form
}

// authFunc maps a host index to its URL authority (name:port).
type authFunc func(host int) string

// url is the absolute URL of t as a crawler would fetch it.
func (t target) url(auth authFunc) string {
	if t.host == hostLiteral {
		return t.path
	}
	return "http://" + auth(t.host) + t.path
}

// write renders r as it appears in a document of host docHost whose
// effective base directory is baseDir.
func (r ref) write(docHost int, baseDir string, auth authFunc) string {
	t := r.to
	if t.host == hostLiteral {
		return t.path
	}
	f := r.form
	if t.host != docHost && f != formProtocol {
		f = formAbsolute // other hosts need an authority
	}
	switch f {
	case formAbsolute:
		return t.url(auth)
	case formProtocol:
		return "//" + auth(t.host) + t.path
	case formRelative:
		return relPath(baseDir, t.path)
	case formDot:
		rel := relPath(baseDir, t.path)
		if !strings.HasPrefix(rel, "../") && !strings.HasPrefix(rel, "./") {
			rel = "./" + rel
		}
		return rel
	case formFragment:
		return t.path + "#part-" + fragmentOf(t.path)
	case formSpaced:
		return "  " + t.path + " "
	default:
		return t.path
	}
}

// fragmentOf derives a stable fragment name from a path.
func fragmentOf(p string) string {
	// A byte loop, not strings.NewReplacer: building the replacer on every
	// fragment reference cost more than the replacing.
	b := []byte(p)
	for i, c := range b {
		switch c {
		case '/', '.', '?', '=':
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-") + "x"
}

// relPath writes target (an absolute path, maybe with a query) relative to
// baseDir (an absolute path ending in '/').
func relPath(baseDir, target string) string {
	p, query, hasQuery := strings.Cut(target, "?")
	dir, file := p[:strings.LastIndexByte(p, '/')+1], p[strings.LastIndexByte(p, '/')+1:]
	bseg := segments(baseDir)
	tseg := segments(dir)
	n := 0
	for n < len(bseg) && n < len(tseg) && bseg[n] == tseg[n] {
		n++
	}
	var b strings.Builder
	for range len(bseg) - n {
		b.WriteString("../")
	}
	for _, seg := range tseg[n:] {
		b.WriteString(seg)
		b.WriteByte('/')
	}
	b.WriteString(file)
	rel := b.String()
	if rel == "" {
		rel = "./" // an empty reference would mean the document itself
	}
	if hasQuery {
		rel += "?" + query
	}
	return rel
}

// segments splits a directory path such as /a/b/ into [a b].
func segments(dir string) []string {
	dir = strings.Trim(dir, "/")
	if dir == "" {
		return nil
	}
	return strings.Split(dir, "/")
}

// dirOf returns the directory part of a path (up to and including the last
// slash), ignoring any query.
func dirOf(p string) string {
	p, _, _ = strings.Cut(p, "?")
	return p[:strings.LastIndexByte(p, '/')+1]
}
