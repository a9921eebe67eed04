package testweb

import (
	"strings"
	"testing"
)

// PageBytes pads HTML documents to at least the size asked for, keeping
// their links, and leaves other resources alone; a negative size is refused.
func TestPageBytesPadsHTML(t *testing.T) {
	plain := startSite(t, Config{Seed: 4, Hosts: 1, PagesPerHost: 5})
	padded := startSite(t, Config{Seed: 4, Hosts: 1, PagesPerHost: 5, PageBytes: 10_000})
	small := getBody(t, plain, plain.Seeds()[0])
	big := getBody(t, padded, padded.Seeds()[0])
	if len(small) >= 10_000 || len(big) < 10_000 || len(big) > 12_000 {
		t.Fatalf("page sizes %d (plain) and %d (padded to 10000)", len(small), len(big))
	}
	if strings.Count(big, "<a href=") != strings.Count(small, "<a href=") {
		t.Fatal("padding changed the links")
	}
	if _, err := Generate(Config{PageBytes: -1}); err == nil || !strings.Contains(err.Error(), "pageBytes") {
		t.Fatalf("negative PageBytes: err = %v", err)
	}
}
