package uri

import (
	"sync"
	"testing"
)

// resolverBases are pairs of bases with the same directory, so a result
// cached for the first is looked up for the second.
var resolverBases = [][2]string{
	{"http://h.test/a/b.html", "http://h.test/a/c.html?q=1/2/3"},
	{"http://h.test/a/", "http://h.test/a/?x#frag"},
	{"https://u:p@h.test:8443/a/b/c", "https://u:p@h.test:8443/a/b/d?e=/f"},
	{"http://h.test/", "http://h.test/index.html"},
	{"http://h.test/a/b?x=/y/z", "http://h.test/a/c"},
}

var resolverRefs = []string{
	"x.html", "./x", "../x", "../../../../x", ".", "..", "/x", "//other.test/x", `\\other.test\x`,
	"http://other.test/x", "HTTP://OTHER.test/x#f", "http:foo", "http:/foo", `http:\foo`, "https:foo",
	"http:?q", "http:", "http:#f", "HTTP:?q", "?q", "?", "#f", "", " x", "x ", "\x01?q", "?q\x01",
	"%2e%2e/x", "x?y=/z", "x#y", "mailto:a@b.test", "javascript:void(0)", "data:,x", "a:b/c",
	"http://[::1/", "http://h.test:99999/", "é/ü?ß", "x\ty",
}

// TestResolverMatchesResolve checks the cached resolver against Resolve,
// with every result first cached through the other base of the same
// directory.
func TestResolverMatchesResolve(t *testing.T) {
	for _, pair := range resolverBases {
		for _, order := range [][2]string{{pair[0], pair[1]}, {pair[1], pair[0]}} {
			r := NewResolver(0)
			one := r.ForBase()
			for _, ref := range resolverRefs {
				for _, base := range order {
					want, wantErr := Resolve(base, ref)
					for name, got := range map[string]func() (string, error){
						"ForBase": func() (string, error) { return one(base, ref) },
						"Resolve": func() (string, error) { return r.Resolve(base, ref) },
					} {
						abs, err := got()
						if abs != want || (err == nil) != (wantErr == nil) {
							t.Errorf("%s(%q, %q) = %q, %v; Resolve gives %q, %v", name, base, ref, abs, err, want, wantErr)
						}
					}
				}
			}
		}
	}
}

func TestResolverBadBase(t *testing.T) {
	r := NewResolver(0)
	f := r.ForBase()
	for _, base := range []string{"", "not a url", "mailto:a@b.test", "http://", "ftp://h.test/a/"} {
		if abs, err := f(base, "x.html"); err == nil {
			t.Errorf("ForBase(%q, x.html) = %q, want an error", base, abs)
		}
		if abs, err := r.Resolve(base, "/x"); err == nil {
			t.Errorf("Resolve(%q, /x) = %q, want an error", base, abs)
		}
	}
	// A good base after a bad one is parsed afresh.
	if abs, err := f("http://h.test/a/b", "c"); err != nil || abs != "http://h.test/a/c" {
		t.Errorf("after bad bases: %q, %v", abs, err)
	}
}

func TestResolverCacheBounded(t *testing.T) {
	r := NewResolver(8)
	f := r.ForBase()
	for i := range 100 {
		// A backslash sends each reference past fastResolve to the cache.
		if _, err := f("http://h.test/a/b", "p\\"+string(rune('a'+i%26))+string(rune('a'+i/26))); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.cache.Len(); n != 8 {
		t.Errorf("cache holds %d entries, want its bound 8", n)
	}
}

func TestResolverConcurrent(t *testing.T) {
	r := NewResolver(16)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			f := r.ForBase()
			for i := range 200 {
				base := resolverBases[(g+i)%len(resolverBases)][i%2]
				ref := resolverRefs[i%len(resolverRefs)]
				want, _ := Resolve(base, ref)
				if got, _ := f(base, ref); got != want {
					t.Errorf("%q against %q: %q, want %q", ref, base, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkResolver(b *testing.B) {
	refs := []string{"00012.html", "../style.css", "../", "00013.html", "/docs/x.html"}
	for _, c := range []struct {
		name string
		fn   func() func(string, string) (string, error)
	}{
		{"uncached", func() func(string, string) (string, error) { return Resolve }},
		{"cached", func() func(string, string) (string, error) { return NewResolver(0).ForBase() }},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := c.fn()
			for i := 0; b.Loop(); i++ {
				if _, err := f("http://docs.test/pages/00005.html", refs[i%len(refs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
