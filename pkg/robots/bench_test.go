package robots

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkAllowed measures one decision against a large, realistic file:
// many named groups before the matching one and a few hundred rules, some
// with wildcards.
func BenchmarkAllowed(b *testing.B) {
	var sb strings.Builder
	for i := range 50 {
		fmt.Fprintf(&sb, "User-agent: otherbot%d\nDisallow: /\n\n", i)
	}
	sb.WriteString("User-agent: *\n")
	for i := range 300 {
		fmt.Fprintf(&sb, "Disallow: /section%d/\nAllow: /section%d/public/\nDisallow: /*.tmp%d$\n", i, i, i)
	}
	r := Parse(200, []byte(sb.String()))
	paths := []string{"/section150/public/page?x=1", "/section299/private", "/other/page.html", "/a/b.tmp7"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Allowed(ourUA, paths[i%len(paths)])
	}
}
