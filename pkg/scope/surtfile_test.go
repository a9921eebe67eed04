package scope

import (
	"bufio"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParsePrefixes(t *testing.T) {
	file := "\ufeff# UKWA domain scope\n" +
		"\n" +
		"+uk\n" +
		"+scot   # trailing comment\n" +
		"  +http://(uk,co,Example,  \n" +
		"+https://(org,example,)/secure/\n" +
		"http://www.example.org/main/subsection\n" +
		"https://one.two.three\n" +
		"+bit.ly/\n" +
		"http://www.example.org/a#frag\n"
	got, err := ParsePrefixes(strings.NewReader(file), "domain.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"http://(uk,",
		"http://(scot,",
		"http://(uk,co,example,",
		"http://(org,example,)/secure/",
		"http://(org,example,www,)/main/",
		"http://(three,two,one,",
		"http://(ly,bit,)/",
		"http://(org,example,www,)/",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestParsePrefixesBadLines(t *testing.T) {
	tests := []struct {
		name, body string
		line       int
		reason     string
	}{
		{"two entries", "+uk\nhttp://a.example/ http://b.example/\n", 2, "more than one entry"},
		{"minus directive", "# c\n\n-http://(uk,\n", 3, `"-" lines are not supported`},
		{"bare plus", "+\n", 1, `"+" with nothing after it`},
		{"SURT without plus", "http://(uk,co,\n", 1, `write literal prefixes with a leading "+"`},
		{"malformed literal", "+uk,co,(example\n", 1, "malformed SURT prefix"},
		{"literal IDN", "+http://(uk,co,bücher,\n", 1, "non-ASCII host"},
		{"not a URL", "+uk\nhttp://exa mple.org/\n", 2, "more than one entry"},
		{"garbage", "+uk\n%%%:\n", 2, "cannot derive a SURT prefix"},
		{"long line", "+uk\n" + strings.Repeat("a", maxLineBytes+10) + "\n", 2, "longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePrefixes(strings.NewReader(tc.body), "f.txt")
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("got %q, %v; want a *LineError", got, err)
			}
			if got != nil || le.Source != "f.txt" || le.Line != tc.line || !strings.Contains(le.Reason, tc.reason) {
				t.Fatalf("got %v (prefixes %q); want f.txt:%d %q", err, got, tc.line, tc.reason)
			}
			if !strings.HasPrefix(err.Error(), "f.txt:") {
				t.Fatalf("error %q does not start with the position", err)
			}
		})
	}
}

// TestImpliedPrefixGolden checks file lines against the shared Heritrix
// vectors: a URL line means the prefix it implies.
func TestImpliedPrefixGolden(t *testing.T) {
	f, err := os.Open("testdata/surt-heritrix.tsv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sc := bufio.NewScanner(f)
	n, rows := 0, 0
	for sc.Scan() {
		n++
		cols := strings.Split(sc.Text(), "\t")
		if strings.HasPrefix(sc.Text(), "#") || len(cols) != 3 {
			continue
		}
		rows++
		p, ok, err := PrefixFromLine(cols[0])
		if err != nil || !ok || p != cols[2] {
			t.Errorf("line %d: PrefixFromLine(%q) = %q, %v, %v; want %q", n, cols[0], p, ok, err, cols[2])
		}
		// The URL itself is under the prefix it implies.
		if !NewPrefixSet([]string{p}).ContainsPrefixOf(cols[1]) {
			t.Errorf("line %d: SURT %q not under its own implied prefix %q", n, cols[1], p)
		}
	}
	if rows == 0 {
		t.Fatal("no vectors read")
	}
}

// TestSurtEdgeCases checks which candidates a prefix line admits, for the
// cases operators trip over: ports, userinfo, IDN, https, trailing slashes.
func TestSurtEdgeCases(t *testing.T) {
	tests := []struct {
		line string
		in   []string
		out  []string
	}{
		{"http://example.org:8080/",
			[]string{"http://example.org:8080/a", "https://example.org:8080/"},
			[]string{"http://example.org/a", "http://example.org:80/a", "http://example.org:8081/"}},
		{"example.org", // host only: open, subdomains and ports too
			[]string{"http://example.org/", "https://www.example.org:8443/x", "http://a.b.example.org/"},
			[]string{"http://example.com/", "http://examples.org/", "http://notexample.org/"}},
		{"http://user@example.org/",
			[]string{"http://user@example.org/a"},
			[]string{"http://example.org/a", "http://other@example.org/a", "http://user:pw@example.org/a"}},
		{"http://example.org/", // Heritrix SURTs keep userinfo, so this does not admit it
			[]string{"http://example.org/a"},
			[]string{"http://user@example.org/a"}},
		{"http://bücher.example/",
			[]string{"http://xn--bcher-kva.example/a", "http://BÜCHER.example/b"},
			[]string{"http://bucher.example/"}},
		{"+http://(example,xn--bcher-kva,)/",
			[]string{"http://bücher.example/c"}, nil},
		{"https://example.org/a/",
			[]string{"http://example.org/a/b", "https://example.org/a/b"},
			[]string{"http://example.org/ab", "http://example.org/"}},
		{"+https://(org,example,)/secure/",
			[]string{"http://example.org/secure/x", "https://example.org/secure/"}, nil},
		{"http://example.org/main", // no trailing slash: the last segment goes
			[]string{"http://example.org/other"},
			[]string{"http://www.example.org/main"}},
		{"http://example.org/main/",
			[]string{"http://example.org/main/x"},
			[]string{"http://example.org/other", "http://example.org/mainx"}},
		{"+HTTP://(ORG,Example,www,)/Path/", // SURTs are lowercased throughout
			[]string{"http://www.example.org/path/x", "http://WWW.EXAMPLE.ORG/PATH/y"},
			[]string{"http://www.example.org/other/"}},
		{"http://127.0.0.2:8080/", // dotted quads are not reversed
			[]string{"http://127.0.0.2:8080/x"},
			[]string{"http://127.0.0.20:8080/x"}},
	}
	for _, tc := range tests {
		p, ok, err := PrefixFromLine(tc.line)
		if err != nil || !ok {
			t.Fatalf("PrefixFromLine(%q): %v", tc.line, err)
		}
		set := NewPrefixSet([]string{p})
		for _, u := range tc.in {
			if !set.ContainsPrefixOf(candidate(t, u, "", "", false).SURT) {
				t.Errorf("%q (prefix %s) should admit %s", tc.line, p, u)
			}
		}
		for _, u := range tc.out {
			if set.ContainsPrefixOf(candidate(t, u, "", "", false).SURT) {
				t.Errorf("%q (prefix %s) should not admit %s", tc.line, p, u)
			}
		}
	}
}

func TestDomainAndHostForms(t *testing.T) {
	tests := []struct{ in, domain, host string }{
		{"http://(uk,co,example,www,)/a/", "http://(uk,co,example,", "http://(uk,co,example,www,)"},
		{"http://(uk,co,example,", "http://(uk,co,example,", "http://(uk,co,example,)"},
		{"http://(org,example,www,", "http://(org,example,", "http://(org,example,www,)"},
		{"http://(uk", "http://(uk", "http://(uk,)"},
		{"http://(org,example,)", "http://(org,example,", "http://(org,example,)"},
	}
	for _, tc := range tests {
		if got := toDomain(tc.in); got != tc.domain {
			t.Errorf("toDomain(%q) = %q, want %q", tc.in, got, tc.domain)
		}
		if got := toHost(tc.in); got != tc.host {
			t.Errorf("toHost(%q) = %q, want %q", tc.in, got, tc.host)
		}
	}
}

// TestParsePrefixesLargeFile takes the parallel path: the order of the
// prefixes and the position of an error must be those of the file.
func TestParsePrefixesLargeFile(t *testing.T) {
	var b strings.Builder
	n := 3*parallelLines + 17
	for i := range n {
		if i%2 == 0 {
			b.WriteString("+http://(uk,co,site" + strconv.Itoa(i) + ",\n")
		} else {
			b.WriteString("http://host" + strconv.Itoa(i) + ".example.org/a/\n")
		}
	}
	got, err := ParsePrefixes(strings.NewReader(b.String()), "big.txt")
	if err != nil || len(got) != n {
		t.Fatalf("%d prefixes, %v", len(got), err)
	}
	if got[n-2] != "http://(org,example,host"+strconv.Itoa(n-2)+",)/a/" || got[n-1] != "http://(uk,co,site"+strconv.Itoa(n-1)+"," {
		t.Fatalf("order lost: %q, %q", got[n-2], got[n-1])
	}
	bad := b.String() + "http://(uk,\n" + strings.Repeat("+uk\n", parallelLines)
	_, err = ParsePrefixes(strings.NewReader("+uk\n-early\n"+bad), "big.txt")
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("got %v, want the earliest bad line (2)", err)
	}
	_, err = ParsePrefixes(strings.NewReader(bad), "big.txt")
	if !errors.As(err, &le) || le.Line != n+1 {
		t.Fatalf("got %v, want line %d", err, n+1)
	}
}
