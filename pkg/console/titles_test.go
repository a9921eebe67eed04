package console

import (
	"strings"
	"testing"
)

func TestPageTitle(t *testing.T) {
	long := strings.Repeat("ab ", 400)
	for _, c := range []struct{ name, doc, encoding, want string }{
		{"hostile markup is text", `<html><head><title><script>alert(1)</script></title>`, "", "<script>alert(1)</script>"},
		{"entities decoded, spaces collapsed", "<title>\n  Tom &amp; Jerry\t\n</title>", "", "Tom & Jerry"},
		{"no title", "<html><body><h1>x</h1></body></html>", "", ""},
		{"empty title", "<title></title><p>x", "", ""},
		{"title in the body still counts", "<body><title>late</title>", "", "late"},
		{"a compressed body is not read", "<title>x</title>", "gzip", ""},
		{"identity coding is read", "<title>x</title>", "identity", "x"},
		{"bounded", "<title>" + long + "</title>", "", strings.Join(strings.Fields(long), " ")[:maxTitleRunes] + "…"},
		{"not HTML at all", "\x00\x01\x02 binary", "", ""},
	} {
		if got := pageTitle(strings.NewReader(c.doc), c.encoding); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
