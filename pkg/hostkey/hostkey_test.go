package hostkey

import (
	"bufio"
	"os"
	"strings"
	"testing"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

func TestMurmur3Vectors(t *testing.T) {
	// Published MurmurHash3_x86_32 test vectors.
	tests := []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0},
		{"", 1, 0x514e28b7},
		{"", 0xffffffff, 0x81f16f39},
		{"\x00\x00\x00\x00", 0, 0x2362f9de},
		{"\x21\x43\x65\x87", 0, 0xf55b516b},
		{"\x21\x43\x65\x87", 0x5082edee, 0x2362f9de},
		{"\x21\x43\x65", 0, 0x7e4a8634},
		{"\x21\x43", 0, 0xa0f7b07a},
		{"\x21", 0, 0x72661cf4},
		{"\xff\xff\xff\xff", 0, 0x76293b50},
		{"aaaa", 0x9747b28c, 0x5a97808a},
		{"abc", 0, 0xb3dd93fa},
		{"Hello, world!", 0x9747b28c, 0x24884cba},
		{"The quick brown fox jumps over the lazy dog", 0x9747b28c, 0x2fa826cd},
	}
	for _, tt := range tests {
		if got := Murmur3([]byte(tt.in), tt.seed); got != tt.want {
			t.Errorf("Murmur3(%q, %#x) = %#08x, want %#08x", tt.in, tt.seed, got, tt.want)
		}
	}
}

func TestOfGoldenVectors(t *testing.T) {
	f, err := os.Open("testdata/hostkeys.tsv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sc := bufio.NewScanner(f)
	n := 0
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		authority, want, ok := strings.Cut(text, "\t")
		if !ok {
			t.Fatalf("hostkeys.tsv:%d: no tab", line)
		}
		n++
		if got := Of(authority); got != want {
			t.Errorf("hostkeys.tsv:%d: Of(%q) = %s, want %s", line, authority, got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Fatalf("only %d vectors read", n)
	}
}

func TestAuthorityAndForURL(t *testing.T) {
	tests := []struct {
		in, authority string
	}{
		{"http://www.example.com/", "www.example.com"},
		{"https://WWW.Example.COM/path?q#f", "www.example.com"},
		{"http://www.example.com:80/", "www.example.com"},
		{"https://www.example.com:443/", "www.example.com"},
		{"http://example.com:8080/x", "example.com:8080"},
		{"https://example.com:80/", "example.com:80"},
		{"http://user:pw@example.com:8080/", "example.com:8080"},
		{"dns:www.example.com", "www.example.com"},
		{"DNS:WWW.Example.com", "www.example.com"},
		{"http://bücher.ch/", "xn--bcher-kva.ch"},
		{"http://[::1]:8080/", "[::1]:8080"},
	}
	for _, tt := range tests {
		got, err := Authority(tt.in)
		if err != nil || got != tt.authority {
			t.Errorf("Authority(%q) = %q, %v; want %q", tt.in, got, err, tt.authority)
			continue
		}
		key, err := ForURL(tt.in)
		if err != nil || key != Of(tt.authority) {
			t.Errorf("ForURL(%q) = %q, %v; want %q", tt.in, key, err, Of(tt.authority))
		}
	}
	// The golden vectors through whole URLs.
	if k, _ := ForURL("https://www.example.com/some/page"); k != "cf7cc746" {
		t.Errorf("ForURL(https://www.example.com/...) = %s, want cf7cc746", k)
	}
	if k, _ := ForURL("http://example.com:8080/"); k != "61642781" {
		t.Errorf("ForURL(http://example.com:8080/) = %s, want 61642781", k)
	}
	if k, _ := ForURL("dns:acid.matkelly.com"); k != "77256b24" {
		t.Errorf("ForURL(dns:acid.matkelly.com) = %s, want 77256b24", k)
	}
}

func TestAuthorityBadInput(t *testing.T) {
	for _, in := range []string{"", "  ", "dns:", "dns:a/b", "ht!tp://x/", "http://exa mple.com/", "mailto:a@example.com", "not a url"} {
		if got, err := Authority(in); err == nil {
			t.Errorf("Authority(%q) = %q, want error", in, got)
		}
		if got, err := ForURL(in); err == nil {
			t.Errorf("ForURL(%q) = %q, want error", in, got)
		}
	}
}

// The fast path agrees with the WHATWG parser wherever it answers, and
// answers for the normalised forms workers handle.
func TestNormalAuthority(t *testing.T) {
	for _, tc := range []struct {
		url  string
		fast bool // the fast path must answer
	}{
		{"http://a.example/x", true}, {"https://a.example", true}, {"http://a.example:8080/?q", true},
		{"http://127.0.0.1/", true}, {"http://127.0.0.1:8080/x", true}, {"http://10.0.0.255/", true},
		{"http://a.example.:81#f", false}, {"http://xn--bcher-kva.example/", true}, {"http://a-b.example/", true},
		{"http://A.Example/", false}, {"http://a.example:80/", false}, {"https://a.example:443/", false},
		{"http://0x7f.1/", false}, {"http://127.1/", false}, {"http://127.0.0.01/", false}, {"http://256.0.0.1/", false},
		{"http://1.2.3.4.5/", false}, {"http://1.2.3.4./", false}, {"http://017.0.0.1/", false}, {"http://1.2.3.a4/", true},
		{"http://user@a.example/", false}, {"http://a.example:0080/", false}, {"http://[::1]:8080/", false},
		{"ftp://a.example/", false}, {"http://a_b.example/", false}, {"http://a.example:99999/", false}, {"http://a.example:65535/", true}, {"http://a.example:65536/", false},
		{"http://.a.example/", false}, {"http://-a.example/", false}, {"http://a.example:/", false}, {"http:///x", false},
	} {
		got, ok := NormalAuthority(tc.url)
		if ok != tc.fast {
			t.Errorf("NormalAuthority(%q) answers %v, want %v", tc.url, ok, tc.fast)
		}
		want, err := Authority(tc.url)
		if ok && (err != nil || got != want) {
			t.Errorf("NormalAuthority(%q) = %q; the parser gives %q, %v", tc.url, got, want, err)
		}
		if u, perr := whatwg.Parse(tc.url); ok && (perr != nil || u.Host() != got) {
			t.Errorf("NormalAuthority(%q) = %q; whatwg gives %v", tc.url, got, perr)
		}
	}
}
