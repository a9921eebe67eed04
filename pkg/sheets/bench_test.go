package sheets

import (
	"context"
	"fmt"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

// benchSheets attaches ukwa sheets to n host prefixes spread over 50 TLDs,
// a tenth of them with a second, deeper path prefix, as a large profile or
// a year of launches would.
func benchSheets(b *testing.B, n int) (*Sheets, []string) {
	b.Helper()
	p, queries := benchProfile(n)
	s, err := New(context.Background(), p, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s, queries
}

func benchProfile(n int) (profile.Profile, []string) {
	names := []string{"noLimit", "ignoreRobots", "recrawl-1day", "parallel-queues-2", "extraPolite", "noForms"}
	var assocs []profile.Association
	var queries []string
	for i := range n {
		host := fmt.Sprintf("http://(tld%d,site%d,", i%50, i)
		assocs = append(assocs, profile.Association{SurtPrefixes: []string{host}, Sheets: []string{names[i%len(names)]}})
		if i%10 == 0 {
			deep := fmt.Sprintf("http://(tld%d,site%d,www,)/section/", i%50, i)
			assocs = append(assocs, profile.Association{SurtPrefixes: []string{deep}, Sheets: []string{names[(i+1)%len(names)]}})
			queries = append(queries, deep+"page.html?id=1")
		}
		queries = append(queries, fmt.Sprintf("http://(tld%d,site%d,www,)/a/b/c.html", i%50, i),
			fmt.Sprintf("http://(tld%d,other%d,www,)/", i%50, i))
	}
	p := profile.Default()
	p.Sheets = profile.NewSheets([]string{"ukwa"}, nil, assocs)
	return p, queries
}

func BenchmarkFor(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("prefixes=%d", n), func(b *testing.B) {
			s, q := benchSheets(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if s.For(q[i%len(q)]) == nil {
					b.Fatal("nil")
				}
			}
		})
	}
}

// BenchmarkNew measures building the tree and effective profiles for
// 110,000 prefixes.
func BenchmarkNew(b *testing.B) {
	p, _ := benchProfile(100_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(context.Background(), p, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
