package robots

import (
	"testing"

	"github.com/temoto/robotstxt"
)

// TestTemotoComparison runs github.com/temoto/robotstxt beside Parse: on the
// cases where the two agree it must still agree, and on each deviation the
// package doc lists it must still deviate. A failure here means one of them
// changed, and the doc's reasons for not delegating matching to temoto need
// another look.
func TestTemotoComparison(t *testing.T) {
	tests := []struct {
		name, robots, ua, path string
		want                   bool // ours: Heritrix / RFC 9309
		temotoDiffers          bool // temoto answers !want, or cannot parse the file
	}{
		{"prefix", "User-agent: *\nDisallow: /private\n", "trawler", "/private/x", false, false},
		{"longest match", "User-agent: *\nDisallow: /a\nAllow: /a/b\n", "trawler", "/a/b/c", true, false},
		{"leading star", "User-agent: *\nDisallow: *.pdf\n", "trawler", "/x.pdf", false, false},
		{"agent as prefix", "User-agent: trawler\nDisallow: /\n", "trawler/1.0", "/x", false, false},
		{"empty file", "", "trawler", "/x", true, false},
		{"anchor at start", "User-agent: *\nDisallow: /a$\n", "trawler", "/b/a", true, true},
		{"allow wins tie", "User-agent: *\nDisallow: /page\nAllow: /page\n", "trawler", "/page", true, true},
		{"agent contained", "User-agent: trawler\nDisallow: /\n", ourUA, "/x", false, true},
		{"disallow star", "User-agent: *\nDisallow: *\n", "trawler", "/x", false, true},
		{"bad crawl-delay", "User-agent: *\nCrawl-delay: soon\nDisallow: /x\n", "trawler", "/x", false, true},
		{"rule before agent", "Disallow: /y\nUser-agent: *\nDisallow: /x\n", "trawler", "/x", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(200, []byte(tt.robots)).Allowed(tt.ua, tt.path); got != tt.want {
				t.Fatalf("Allowed = %v, want %v", got, tt.want)
			}
			data, err := robotstxt.FromStatusAndBytes(200, []byte(tt.robots))
			differs := err != nil || data.TestAgent(tt.path, tt.ua) != tt.want
			if differs != tt.temotoDiffers {
				t.Errorf("temoto differs = %v (parse error %v), want %v", differs, err, tt.temotoDiffers)
			}
		})
	}
}
