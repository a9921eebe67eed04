package uri

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// fastBases are bases in normal form; fastResolve serves only those.
var fastBases = []string{
	"http://h.test/a/b.html", "http://h.test/", "https://h.test:8443/a/b/c?x=1#f",
	"http://127.0.0.1/docs/x.html", "https://u:p@h.test/a/", "http://h.test/a/b?q=/c/d",
	"http://127.0.0.1:36411/library/os.path.html",
}

// refPieces build random references from what changes a parser's answer:
// schemes, slashes, dots, percent signs, ports, IPv4-like and punycode
// hosts, upper case, and characters the parser percent-encodes.
var refPieces = []string{
	"http://", "https://", "HTTP://", "//", "/", "/", "?", "#", ".", "..", "./", "../", "%", "%2e", "%2E",
	"%41", "%zz", ":", "@", "a", "Z", "0", "9", "-", "--", "xn--", "0x", ":80", ":443", ":8080", ":0",
	":65536", ":080", "_", "~", "!", "$", "&", "'", "(", "*", "+", ",", ";", "=", "é", " ", "\t", "\n",
	"\\", "[", "]", "|", "{", "^", "`", "\"", "<", ">", "com", "h.test", "1", "255", "www.", "b-c",
	"x.html", "p", "q=1", "..a", "a.", "%2e%2e", "\x00", "\x7f", "%00",
}

func randomRef(rng *rand.Rand) string {
	var sb strings.Builder
	for range 1 + rng.IntN(8) {
		sb.WriteString(refPieces[rng.IntN(len(refPieces))])
	}
	return sb.String()
}

// TestFastResolveMatchesParser holds fastResolve to the parser: whatever it
// answers, the parser answers the same, without an error.
func TestFastResolveMatchesParser(t *testing.T) {
	refs := append([]string{
		"x.html", "/x", "//other.test/x", "http://other.test", "http://other.test?q", "https://o.test:8443/p?q#f",
		"http://o.test:80/", "https://o.test:443/", "http://1.2.3.4/", "http://0x7f.1/", "http://a..b/",
		"http://xn--nxasmq6b.test/", "http://xn--a.test/", "http://xn--.test/", "http://xn--zz-9.test/", "http://o.test:080/", "http://o.test:0/", "http://o.test:00081/", "http://a.b./c", "http://-a.test/", "http://ab--c.test/", "a:b",
		"a/b:c", "x?y:z", "#f", "?q", "", "x#", "/a/./b", "/a/../b", "a/%2e/b", "http://A.test/",
		"../x.html", "a/../../b", "./", "..", ".", "/a/b/..", "../../../../x?y/../z", "http://h.test/a/../b",
		"//h.test/./x", "./a/./b/.", "../_static/x.css#f", "http://10.0.0.1:8080/a/../b", "http://256.1.1.1/",
		"http://01.2.3.4/", "http://1.2.3/", "http://1.2.3.4./",
	}, resolverRefs...)
	rng := rand.New(rand.NewPCG(5, 7))
	for range 50000 {
		refs = append(refs, randomRef(rng))
	}
	fast := 0
	for _, base := range fastBases {
		b, err := parse(base)
		if err != nil {
			t.Fatal(err)
		}
		if b.Href(false) != base {
			t.Fatalf("base %q is not in normal form (%q)", base, b.Href(false))
		}
		fb, ok := newFastBase(base)
		if !ok {
			t.Fatalf("newFastBase(%q) refused a base in normal form", base)
		}
		for _, ref := range refs {
			got, ok := fastResolve(fb, ref)
			if !ok {
				continue
			}
			fast++
			want, err := resolveParsed(b, base, ref)
			if err != nil || got != want {
				t.Errorf("fastResolve(%q, %q) = %q; the parser gives %q, %v", base, ref, got, want, err)
			}
		}
	}
	// The test means something only if the fast path answers often.
	if fast < len(refs) {
		t.Errorf("fastResolve answered %d of %d resolutions", fast, len(refs)*len(fastBases))
	}
}

func TestNewFastBase(t *testing.T) {
	for _, c := range []struct {
		base, origin, dir string
		ok                bool
	}{
		{"http://h.test/a/b?c/d#e/f", "http://h.test", "http://h.test/a/", true},
		{"https://h.test:8443/", "https://h.test:8443", "https://h.test:8443/", true},
		{"http://h.test", "", "", false},
		{"ftp://h.test/a", "", "", false},
		{"mailto:x@h.test", "", "", false},
	} {
		fb, ok := newFastBase(c.base)
		if ok != c.ok || fb.origin != c.origin || fb.dir != c.dir {
			t.Errorf("newFastBase(%q) = %+v, %v; want origin %q dir %q, %v", c.base, fb, ok, c.origin, c.dir, c.ok)
		}
	}
}

// TestIsNormalMatchesNormalize holds IsNormal to Normalize: a URL it calls
// normal, Normalize returns unchanged.
func TestIsNormalMatchesNormalize(t *testing.T) {
	urls := []string{
		"http://h.test/", "https://h.test:8443/a?b", "http://h.test", "http://H.test/", "http://h.test:80/",
		"http://h.test/a#f", "http://1.2.3.4/", "http://h.test/a/../b", "http://h.test/%2e/", "ftp://h.test/",
		"http://u@h.test/", "http://h.test/a b", "http://h.test/é", "http://h.test?q", " http://h.test/",
		"http://127.0.0.1:8080/a", "http://127.0.0.01/", "http://1.2.3/", "http://0.0.0.0/", "http://255.255.255.255/",
	}
	rng := rand.New(rand.NewPCG(11, 13))
	for range 50000 {
		urls = append(urls, randomURL(rng))
	}
	normal := 0
	for _, u := range urls {
		if !IsNormal(u) {
			continue
		}
		normal++
		if n, err := Normalize(u); err != nil || n != u {
			t.Errorf("IsNormal(%q), but Normalize gives %q, %v", u, n, err)
		}
	}
	for _, u := range []string{"http://h.test/", "https://h.test:8443/a?b", "http://h.test/a/b.html"} {
		if !IsNormal(u) {
			t.Errorf("IsNormal(%q) = false", u)
		}
	}
	if normal < len(urls)/200 {
		t.Errorf("IsNormal accepted only %d of %d URLs", normal, len(urls))
	}
}

var (
	urlSchemes = []string{"http://", "https://", "HTTP://", "ftp://", "http:/", "//"}
	urlLabels  = []string{"h", "test", "a-b", "xn--a", "0x1", "1", "255", "B", "é", "", "-a", "a-", "ab--c", "www"}
	urlPorts   = []string{"", "", "", ":80", ":443", ":8080", ":0", ":080", ":65536", ":", ":8a"}
	safePieces = []string{"a", "b.html", "x", "-", "_", "~", "%41", "%2e", "?", "=", "&", ";", "@", ":", "/", ".", ".."}
)

// randomURL builds mostly well-formed URLs from pieces that decide whether
// a URL is in normal form.
func randomURL(rng *rand.Rand) string {
	var sb strings.Builder
	sb.WriteString(urlSchemes[rng.IntN(len(urlSchemes))])
	for i := range 1 + rng.IntN(3) {
		if i > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(urlLabels[rng.IntN(len(urlLabels))])
	}
	sb.WriteString(urlPorts[rng.IntN(len(urlPorts))])
	switch rng.IntN(4) {
	case 0:
	case 1:
		sb.WriteString("?" + randomRef(rng))
	case 2:
		sb.WriteString("/" + randomRef(rng))
	default:
		sb.WriteByte('/')
		for range rng.IntN(6) {
			sb.WriteString(safePieces[rng.IntN(len(safePieces))])
		}
	}
	return sb.String()
}
