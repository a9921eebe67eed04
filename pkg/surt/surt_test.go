package surt

import (
	"bufio"
	"os"
	"strings"
	"testing"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// readTSV returns the non-comment lines of a testdata file split on tabs,
// with their line numbers.
func readTSV(t *testing.T, name string, fields int) [][]string {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var rows [][]string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != fields {
			t.Fatalf("%s:%d: %d fields, want %d", name, n, len(cols), fields)
		}
		rows = append(rows, append([]string{name + ":" + itoa(n)}, cols...))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no vectors", name)
	}
	return rows
}

func itoa(n int) string {
	var b []byte
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func TestHeritrixGolden(t *testing.T) {
	for _, row := range readTSV(t, "surt-heritrix.tsv", 3) {
		pos, in, wantSURT, wantPrefix := row[0], row[1], row[2], row[3]
		if got := Heritrix(in); got != wantSURT {
			t.Errorf("%s: Heritrix(%q) = %q, want %q", pos, in, got, wantSURT)
		}
		if got := ImpliedPrefix(in); got != wantPrefix {
			t.Errorf("%s: ImpliedPrefix(%q) = %q, want %q", pos, in, got, wantPrefix)
		}
	}
}

// HeritrixParsed agrees with Heritrix on every golden URL that has a
// scheme and parses.
func TestHeritrixParsedAgrees(t *testing.T) {
	inputs := []string{
		"http://www.archive.org", "http://www.archive.org/", "HTTP://WWW.Archive.ORG:80/a/B?c=D#frag",
		"https://www.example.org:8443/x/", "http://user:pass@www.archive.org:8080/m.php", "http://127.2.34.5/foo",
		"http://[2001:db8::1]:8080/p", "http://bücher.example/straße?q=ä", "http://example.org/a/../b/./c",
		"http://example.org?q", "https://example.org:443", "http://example.org/%7euser/",
	}
	for _, row := range readTSV(t, "surt-heritrix.tsv", 3) {
		inputs = append(inputs, row[1])
	}
	n := 0
	for _, in := range inputs {
		in = strings.TrimSpace(in)
		p, err := whatwg.Parse(in)
		if err != nil || !strings.Contains(in, "://") {
			continue
		}
		n++
		if got, want := HeritrixParsed(in, p.Href(true)), Heritrix(in); got != want {
			t.Errorf("HeritrixParsed(%q) = %q, Heritrix gives %q", in, got, want)
		}
	}
	if n < 15 {
		t.Fatalf("only %d URLs checked", n)
	}
}

func TestHeritrix(t *testing.T) {
	tests := []struct{ in, want string }{
		// Heritrix SURTTest cases.
		{"http://www.archive.org/movies/movies.php", "http://(org,archive,www,)/movies/movies.php"},
		{"http://www.archive.org:8080/movies/movies.php", "http://(org,archive,www,:8080)/movies/movies.php"},
		{"http://user:pass@www.archive.org/movies/movies.php", "http://(org,archive,www,@user:pass)/movies/movies.php"},
		{"http://user:pass@www.archive.org:8080/movies/movies.php", "http://(org,archive,www,:8080@user:pass)/movies/movies.php"},
		{"http://www.example.com/foo@bar", "http://(com,example,www,)/foo@bar"},
		{"http://127.2.34.5/foo", "http://(127.2.34.5)/foo"},
		// Fragment dropped by the fix-up; a URL without scheme is http.
		{"http://www.archive.org/movies/movies.php#top", "http://(org,archive,www,)/movies/movies.php"},
		{"www.example.org/a", "http://(org,example,www,)/a"},
		{"example.org:8080/a", "http://(org,example,:8080)/a"},
		// Default ports go, explicit other ports stay; https folds.
		{"http://example.org:80/a", "http://(org,example,)/a"},
		{"https://example.org:443/a", "http://(org,example,)/a"},
		{"https://example.org:8443/", "http://(org,example,:8443)/"},
		// Whole SURT lowercased (Heritrix does not preserve case).
		{"http://Example.org/Some/Path?Q=A", "http://(org,example,)/some/path?q=a"},
		// IDN hosts are punycoded.
		{"http://bücher.example/", "http://(example,xn--bcher-kva,)/"},
		// Uppercase escapes are kept as escapes (and lowercased).
		{"http://example.org/a%2Fb", "http://(org,example,)/a%2fb"},
		{"http://example.org/a/../b/./c", "http://(org,example,)/b/c"},
		{"http://example.org?x=1", "http://(org,example,)/?x=1"},
		{"ftp://ftp.example.org/pub/", "ftp://(org,example,ftp,)/pub/"},
		// Not authority-based: unchanged.
		{"mailto:someone@example.org", "mailto:someone@example.org"},
		{"dns:www.example.org", "dns:www.example.org"},
		// Unparsable: Heritrix carries on with the raw string, which does not
		// match the SURT pattern because of the space.
		{"http://exa mple.org/", "http://exa mple.org/"},
		{"", "http://"},
	}
	for _, tt := range tests {
		if got := Heritrix(tt.in); got != tt.want {
			t.Errorf("Heritrix(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestImpliedPrefix(t *testing.T) {
	tests := []struct{ in, want string }{
		// Heritrix SurtPrefixSetTest cases.
		{"http://www.archive.org/index.html", "http://(org,archive,www,)/"},
		{"http://timmknibbs4senate.blogspot.com/", "http://(com,blogspot,timmknibbs4senate,)/"},
		{"https://one.two.three", "http://(three,two,one,"},
		{"https://xone.two.three/a/b/c/", "http://(three,two,xone,)/a/b/c/"},
		{"https://yone.two.three/a/b/c", "http://(three,two,yone,)/a/b/"},
		// Host-only seeds and ports.
		{"example.org", "http://(org,example,"},
		{"example.org/", "http://(org,example,)/"},
		{"http://example.org:8080", "http://(org,example,:8080"},
		{"http://example.org/a?b=c/d", "http://(org,example,)/a?b=c/"},
	}
	for _, tt := range tests {
		if got := ImpliedPrefix(tt.in); got != tt.want {
			t.Errorf("ImpliedPrefix(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCDXKeyGolden(t *testing.T) {
	for _, row := range readTSV(t, "surt-cdx-keys.tsv", 2) {
		pos, in, want := row[0], row[1], row[2]
		got, err := CDXKey(in)
		if err != nil {
			t.Errorf("%s: CDXKey(%q): %v", pos, in, err)
			continue
		}
		if got != want {
			t.Errorf("%s: CDXKey(%q) = %q, want %q", pos, in, got, want)
		}
	}
}

func TestCDXKey(t *testing.T) {
	tests := []struct{ in, want string }{
		// www, www2., www34. stripped; not www2foo.
		{"http://www34.archive.org/index.html?b=a&b=b&a=b", "org,archive)/index.html?a=b&b=a&b=b"},
		{"http://www2foo.com/", "com,www2foo)/"},
		{"http://www2.www2foo.com/", "com,www2foo)/"},
		// Scheme dropped, so http and https share a key; default ports go.
		{"https://www.example.com/", "com,example)/"},
		{"http://www.example.com:80/", "com,example)/"},
		{"https://www.example.com:443/", "com,example)/"},
		{"https://www.example.com:80/", "com,example:80)/"},
		{"http://example.com:8080/x", "com,example:8080)/x"},
		{"http://mineral.example.com:/minerals/", "com,example,mineral)/minerals"},
		// Userinfo and fragments dropped.
		{"http://user:pw@www.example.com/a#frag", "com,example)/a"},
		{"http://evil.com/foo#bar#baz", "com,evil)/foo"},
		// Trailing slashes: stripped unless the path is just "/"; empty path.
		{"http://example.com", "com,example)/"},
		{"http://example.com/a/b/", "com,example)/a/b"},
		{"http://example.com?x=1", "com,example)/?x=1"},
		// Percent escapes: decoded repeatedly, re-encoded minimally, lowercased.
		{"http://example.com/%7Efoo", "com,example)/~foo"},
		{"http://host/%25%32%35", "host)/%25"},
		{"http://host/%%%25%32%35asd%%", "host)/%25%25%25asd%25%25"},
		{"http://host.com/ab%23cd", "com,host)/ab%23cd"},
		{"http://example.com/A%2Fb", "com,example)/a/b"},
		{"http://example.com/caf%C3%A9", "com,example)/caf%c3%a9"},
		{"http://example.com/café", "com,example)/caf%c3%a9"},
		{"http://example.com/a b", "com,example)/a%20b"},
		// Dot segments and doubled slashes.
		{"http://www.google.com/blah/..", "com,google)/"},
		{"http://host.com//twoslashes?more//slashes", "com,host)/twoslashes?more//slashes"},
		{"http:////////////////www.vikings.com", "com,vikings)/"},
		{"http://https://order.1and1.com", "com,1and1,order)/"},
		{"http://www.google.com.../", "com,google)/"},
		// Hosts: numeric forms, escapes, IDN.
		{"http://3279880203/blah", "11,0,127,195)/blah"},
		{"http://017.0.0.1/", "1,0,0,15)/"},
		{"http://10.0.258/", "2,1,0,10)/"},
		{"http://%31%36%38%2e%31%38%38%2e%39%39%2e%32%36/%2E%73%65%63%75%72%65/", "26,99,188,168)/.secure"},
		{"http://bücher.ch:8080/", "ch,xn--bcher-kva:8080)/"},
		{"http://B%C3%BCcher.ch/", "ch,xn--bcher-kva)/"},
		{"http://[::1]:8080/", "::1:8080)/"},
		// No scheme: http implied.
		{"www.google.com", "com,google)/"},
		{"  http://www.google.com/  ", "com,google)/"},
		{"http://www.google.com/foo\tbar\rbaz\n2", "com,google)/foobarbaz2"},
		// Query: session ids stripped, lowercased, sorted, empty dropped.
		{"http://example.com/foo?X=Y", "com,example)/foo?x=y"},
		{"http://example.com/?b=1&a=1&a", "com,example)/?a&a=1&b=1"},
		{"http://example.com/?jsessionid=0123456789abcdefghijklemopqrstuv&x=y", "com,example)/?x=y"},
		{"http://example.com/?jsessionid=0123456789abcdefghijklemopqrstuv", "com,example)/"},
		{"http://example.com/a?CFID=1169580&CFTOKEN=48630702&dtstamp=22%2F08", "com,example)/a?dtstamp=22/08"},
		{"http://example.com/a?aspsessionidABCDEFGH=ABCDEFGHIJKLMNOPQRSTUVWX&x=y", "com,example)/a?x=y"},
		// ASP.NET session ids in the path.
		{"http://example.com/(S(4hqa0555fwsecu455xqckv45))/mileg.aspx", "com,example)/mileg.aspx"},
		{"http://example.com/(4hqa0555fwsecu455xqckv45)/mileg.aspx", "com,example)/mileg.aspx"},
		{"http://example.com/photos/36050182@N05/", "com,example)/photos/36050182@n05"},
		// Hostless schemes keep the scheme; filedesc passes through verbatim.
		{"dns:WWW.Example.com", "dns:www.example.com"},
		{"mailto:Foo@Example.com", "mailto:foo@example.com"},
		{"filedesc:Foo.ARC.gz", "filedesc:Foo.ARC.gz"},
	}
	for _, tt := range tests {
		got, err := CDXKey(tt.in)
		if err != nil {
			t.Errorf("CDXKey(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("CDXKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCDXKeyBadInput(t *testing.T) {
	tests := []struct{ in, mention string }{
		{"", "empty"},
		{"http://example.com:80x/", "port"},
		{"http://example.com:99999/", "range"},
		{"http://example.com:-1/", "port"},
		{"http://example.com:80:90/", "port"},
	}
	for _, tt := range tests {
		got, err := CDXKey(tt.in)
		if err == nil {
			t.Errorf("CDXKey(%q) = %q, want error", tt.in, got)
			continue
		}
		if !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("CDXKey(%q) error %q does not mention %q", tt.in, err, tt.mention)
		}
	}
}

func TestQueryHelpers(t *testing.T) {
	sorts := map[string]string{
		"": "", "a": "a", "ab=1": "ab=1", "a=1&": "&a=1", "b=1&a=1": "a=1&b=1",
		"a=b&a=a": "a=a&a=b", "b=b&a=b&b=a&a=a": "a=a&a=b&b=a&b=b", "a=&a": "a&a=",
	}
	for in, want := range sorts {
		if got := sortQuery(in); got != want {
			t.Errorf("sortQuery(%q) = %q, want %q", in, got, want)
		}
	}
	const id = "0123456789abcdefghijklemopqrstuv"
	strips := map[string]string{
		"?jsessionid=" + id:                                      "?",
		"?jsessionid=" + id + "0":                                "?jsessionid=" + id + "0",
		"?one=two&jsessionid=" + id + "&x=y":                     "?one=two&x=y",
		"?one=two&phpsessid=" + id:                               "?one=two&",
		"?sid=9682993c8daa2c5497996114facdc805&jsessionid=" + id: "?",
		"?CFID=14475712&CFTOKEN=2D89F5AF-3048-2957-DA4EE4B6B13661AB&r=468710288378&m=forgotten": "?r=468710288378&m=forgotten",
	}
	for in, want := range strips {
		if got := stripQuerySessionID(in); got != want {
			t.Errorf("stripQuerySessionID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIPv4Forms(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"127.0.0.1", "127.0.0.1", true},
		{"017.0.0.1", "15.0.0.1", true},
		{"10.0.258", "10.0.1.2", true},
		{"39024579298", "22.11.210.226", true},
		{"1.2.3.256", "", false},
		{"1.08.1.1", "", false},
		{"www.foo.com", "", false},
		{"1.2.3.4.5", "", false},
	}
	for _, tt := range tests {
		got, ok := ipv4Forms(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ipv4Forms(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestUnescapeRepeatedly(t *testing.T) {
	tests := map[string]string{
		"%!A%21%21%25": "%!A!!%", "%": "%", "%2": "%2", "%25": "%", "%25%": "%%",
		"%2525": "%", "%252525": "%", "%25%32%35": "%",
	}
	for in, want := range tests {
		if got := unescapeRepeatedly(in); got != want {
			t.Errorf("unescapeRepeatedly(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzCDXKey(f *testing.F) {
	for _, s := range []string{"http://www.example.com/a?b=c", "dns:x", "http://[::1]:80/", "%zz", "http://a..b/../.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = CDXKey(s)
		_ = Heritrix(s)
		_ = ImpliedPrefix(s)
	})
}
