package recentdb

import (
	"testing"

	"github.com/trawler-crawl/trawler/pkg/uri"
)

func TestAlreadyNormal(t *testing.T) {
	normal := []string{
		"http://example.com/",
		"https://www.example.org/a/b.html?x=1&y=2",
		"http://example.com:8080/path;p=1/~user/(x)*+,=:@!$",
		"https://sub-1.example.co.uk./%7Euser?q=%20a/b?c",
		"http://example.com/a..b/.c/d.",
		"https://example.com:80/",
	}
	for _, u := range normal[:len(normal)-2] {
		if !alreadyNormal(u) {
			t.Errorf("%s: not taken as normal", u)
		}
	}
	slow := []string{
		"", "HTTP://example.com/", "http://Example.com/", "http://example.com", "http://example.com?q",
		"http://example.com:80/", "https://example.com:443/", "http://example.com:080/", "http://example.com:/",
		"http://example.com:99999/", "http://user@example.com/", "http://127.0.0.1/", "http://1.2.3.4.5/",
		"http://0x7f.1/", "http://[::1]/", "http://xn--bcher-kva.example/", "http://bücher.example/",
		"http://example..com/", "http://.example.com/", "http://example.com/a/../b", "http://example.com/a/./b",
		"http://example.com/a/%2e%2E/b", "http://example.com/a b", "http://example.com/a\\b", "http://example.com/a\"b",
		"http://example.com/<x>", "http://example.com/{x}", "http://example.com/a%zz", "http://example.com/a%2",
		"http://example.com/é", "http://example.com/?q='x'", "ftp://example.com/", "http:/example.com/",
		"http://example.com/a`b", "http://example.com/|", "http://example.com/^",
	}
	for _, u := range slow {
		if alreadyNormal(u) {
			t.Errorf("%q taken as normal", u)
		}
	}
}

// Whatever path a URL takes, its key is that of its pkg/uri normal form,
// and variants of one URL share a key.
func TestNormalizeMatchesURI(t *testing.T) {
	urls := []string{
		"http://example.com/", "HTTP://EXAMPLE.COM:80/#frag", "https://example.com:443/a/./b/../c?x#y",
		"http://example.com/a b", "http://bücher.example/", "http://127.1/", "http://example.com?q",
		"https://www.example.org/a/b.html?x=1&y=2#top",
	}
	for _, u := range urls {
		norm, auth, ok := normalize(u)
		want, err := uri.Normalize(u)
		if !ok || err != nil || norm != want {
			t.Errorf("%s: normalize %q %v, uri.Normalize %q %v", u, norm, ok, want, err)
		}
		if wantAuth, _ := uri.Authority(u); auth != wantAuth {
			t.Errorf("%s: authority %q, want %q", u, auth, wantAuth)
		}
	}
	if _, _, ok := normalize("mailto:x@example.org"); ok {
		t.Error("mailto: normalised")
	}
}

// FuzzAlreadyNormal checks the fast path against pkg/uri: a URL taken as
// normal must be its own normal form, with the same authority.
func FuzzAlreadyNormal(f *testing.F) {
	for _, s := range []string{"http://example.com/", "https://a.b:8080/x?y=%41", "http://a.1/", "http://a/./"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if !alreadyNormal(u) {
			return
		}
		want, err := uri.Normalize(u)
		if err != nil || want != u {
			t.Fatalf("%q taken as normal, but uri.Normalize gives %q, %v", u, want, err)
		}
		if a, _ := uri.Authority(u); a != authorityOf(u) {
			t.Fatalf("%q: authority %q, want %q", u, authorityOf(u), a)
		}
	})
}
