package robots

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

const ourUA = "Mozilla/5.0 (compatible; Trawler/1.0; +https://www.webarchive.org.uk/bl_bot)"

func TestAllowedPatterns(t *testing.T) {
	tests := []struct {
		name, robots, path string
		want               bool
	}{
		{"no rules", "User-agent: *\n", "/a", true},
		{"prefix", "User-agent: *\nDisallow: /private\n", "/private/x", false},
		{"prefix boundary", "User-agent: *\nDisallow: /private\n", "/privateer", false},
		{"not a prefix", "User-agent: *\nDisallow: /private\n", "/public/private", true},
		{"empty path is /", "User-agent: *\nDisallow: /\n", "", false},
		{"empty disallow", "User-agent: *\nDisallow:\n", "/a", true},
		{"query matched", "User-agent: *\nDisallow: /search?q=\n", "/search?q=x", false},
		{"query differs", "User-agent: *\nDisallow: /search?q=\n", "/search?page=2", true},
		{"star middle", "User-agent: *\nDisallow: /a/*/edit\n", "/a/b/c/edit", false},
		{"star middle no match", "User-agent: *\nDisallow: /a/*/edit\n", "/a/b/view", true},
		{"star not anchored at start", "User-agent: *\nDisallow: /a*b\n", "/x/a/b", true},
		{"leading star", "User-agent: *\nDisallow: *.pdf\n", "/docs/x.pdf", false},
		{"star extension", "User-agent: *\nDisallow: /*.php\n", "/a/b.php?x=1", false},
		{"trailing star redundant", "User-agent: *\nDisallow: /tmp*\n", "/tmpfile", false},
		{"disallow star is everything", "User-agent: *\nDisallow: *\n", "/anything", false},
		{"dollar anchors", "User-agent: *\nDisallow: /*.php$\n", "/a.php", false},
		{"dollar anchored miss", "User-agent: *\nDisallow: /*.php$\n", "/a.php?x=1", true},
		{"dollar repeated suffix", "User-agent: *\nDisallow: /*.php$\n", "/a.php.php", false},
		{"dollar literal", "User-agent: *\nDisallow: /exact$\n", "/exact", false},
		{"dollar literal longer", "User-agent: *\nDisallow: /exact$\n", "/exactly", true},
		{"dollar not anchored at start", "User-agent: *\nDisallow: /a$\n", "/b/a", true},
		{"star dollar unanchored", "User-agent: *\nDisallow: /a*$\n", "/abc", false},
		{"dollar inside is literal", "User-agent: *\nDisallow: /a$b\n", "/a$bc", false},
		{"no leading slash", "User-agent: *\nDisallow: private\n", "/private", false},
		{"longest wins allow", "User-agent: *\nDisallow: /a\nAllow: /a/b\n", "/a/b/c", true},
		{"longest wins disallow", "User-agent: *\nAllow: /a\nDisallow: /a/b\n", "/a/b/c", false},
		{"order irrelevant", "User-agent: *\nAllow: /a/b\nDisallow: /a\n", "/a/c", false},
		{"allow wins tie", "User-agent: *\nDisallow: /page\nAllow: /page\n", "/page", true},
		{"allow wins tie reversed", "User-agent: *\nAllow: /page\nDisallow: /page\n", "/page", true},
		{"tie with wildcard", "User-agent: *\nDisallow: /*.gif\nAllow: /x.gif\n", "/x.gif", true},
		{"wildcard length counts", "User-agent: *\nAllow: /p\nDisallow: /*.htm\n", "/page.htm", false},
		{"trailing star not counted", "User-agent: *\nAllow: /a\nDisallow: /a*\n", "/ab", true},
		{"allow root loses to longer", "User-agent: *\nAllow: /\nDisallow: /foo\n", "/foo", false},
		{"robots.txt always allowed", "User-agent: *\nDisallow: /\n", "/robots.txt", true},
		{"utf8 pattern", "User-agent: *\nDisallow: /café\n", "/caf%C3%A9/menu", false},
		{"lower-case escapes", "User-agent: *\nDisallow: /caf%c3%a9\n", "/caf%C3%A9", false},
		{"path lower-case escape", "User-agent: *\nDisallow: /caf%C3%A9\n", "/caf%c3%a9", false},
		{"comment", "User-agent: * # all\nDisallow: /x # not /y\n", "/y", true},
		{"comment rule", "User-agent: *\nDisallow: /x # not /y\n", "/x", false},
		{"case-insensitive keys", "USER-AGENT: *\nDISALLOW: /x\n", "/x", false},
		{"path case-sensitive", "User-agent: *\nDisallow: /X\n", "/x", true},
		{"CR line ends", "User-agent: *\rDisallow: /x\r", "/x", false},
		{"CRLF line ends", "User-agent: *\r\nDisallow: /x\r\n", "/x", false},
		{"BOM", "\ufeffUser-agent: *\nDisallow: /x\n", "/x", false},
		{"html wrapped", "<html><pre>User-agent: *\nDisallow: /x</pre>\n", "/x", false},
		{"space before colon", "User-agent : *\nDisallow : /x\n", "/x", false},
		{"rule before user-agent ignored", "Disallow: /x\nUser-agent: *\nDisallow: /y\n", "/x", true},
		{"unknown lines ignored", "User-agent: *\nNoindex: /x\nFoo\nDisallow: /y\n", "/y", false},
		{"useragent spelling", "Useragent: *\nDisallow: /x\n", "/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse(200, []byte(tt.robots))
			if got := r.Allowed(ourUA, tt.path); got != tt.want {
				t.Errorf("Allowed(%q) with\n%s= %v, want %v", tt.path, tt.robots, got, tt.want)
			}
		})
	}
}

// groupsRobots is modelled on Heritrix's RobotstxtTest sample.
const groupsRobots = `User-agent: *
Disallow: /cgi-bin/
Disallow: /details/software

User-agent: denybot
Disallow: /

User-agent: allowbot1
Disallow:

User-agent: AllowBot2
Disallow: /foo
Disallow: /ok?butno
Allow: /

User-agent: delaybot
User-agent: otherdelaybot
Disallow: /
Crawl-delay: 20
Allow: /images/

User-agent: mergebot
Disallow: /one
User-agent: x
Disallow: /other
User-agent: mergebot
Disallow: /two
`

func TestGroupSelection(t *testing.T) {
	r := Parse(200, []byte(groupsRobots))
	tests := []struct {
		ua, path string
		want     bool
	}{
		{"Mozilla allowbot1 99.9", "/cgi-bin/x", true},
		{"Mozilla ALLOWBOT1 99.9", "/cgi-bin/x", true},
		{"Mozilla allowbot2 99.9", "/path", true},
		{"Mozilla allowbot2 99.9", "/foo", false},
		{"Mozilla allowbot2 99.9", "/ok?butno=something", false},
		{"Mozilla denybot 99.9", "/", false},
		{"Mozilla DenyBot/2.0", "/path", false},
		{"Mozilla anonbot 99.9", "/path", true},
		{"Mozilla anonbot 99.9", "/cgi-bin/foo.pl", false},
		{"Mozilla delaybot 99.9", "/images/a.png", true},
		{"Mozilla delaybot 99.9", "/x", false},
		{"otherdelaybot", "/x", false},
		{"mergebot", "/one", false},
		{"mergebot", "/two", false},
		{"mergebot", "/other", true},
		// The first token in file order contained in the User-Agent wins,
		// even when a later one is longer (Heritrix): "denybot" comes before
		// "allowbot1".
		{"denybot allowbot1", "/x", false},
		{"allowbot1 denybot", "/x", false},
	}
	for _, tt := range tests {
		if got := r.Allowed(tt.ua, tt.path); got != tt.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tt.ua, tt.path, got, tt.want)
		}
	}
}

func TestGroupFallbacks(t *testing.T) {
	tests := []struct {
		name, robots, ua string
		want             bool
	}{
		{"no star group allows", "User-agent: otherbot\nDisallow: /\n", ourUA, true},
		{"named beats star", "User-agent: *\nDisallow: /\n\nUser-agent: trawler\nAllow: /\n", ourUA, true},
		{"named beats star, star first", "User-agent: trawler\nDisallow: /\nUser-agent: *\nAllow: /\n", ourUA, false},
		{"star used when no named match", "User-agent: other\nAllow: /\nUser-agent: *\nDisallow: /\n", ourUA, false},
		{"empty user-agent matches nobody", "User-agent:\nDisallow: /\n", ourUA, true},
		{"token substring of UA", "User-agent: bl_bot\nDisallow: /\n", ourUA, false},
		{"token with version not contained", "User-agent: trawler/2.0\nDisallow: /\n", ourUA, true},
		{"crawl-delay ends agent run", "User-agent: a\nCrawl-delay: 1\nUser-agent: trawler\nDisallow: /\n", "a", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(200, []byte(tt.robots)).Allowed(tt.ua, "/x"); got != tt.want {
				t.Errorf("Allowed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCrawlDelay(t *testing.T) {
	tests := []struct {
		name, robots, ua string
		want             time.Duration
		ok               bool
	}{
		{"integer", "User-agent: *\nCrawl-delay: 10\n", ourUA, 10 * time.Second, true},
		{"fractional", "User-agent: *\nCrawl-delay: 2.5\n", ourUA, 2500 * time.Millisecond, true},
		{"leading dot", "User-agent: *\nCrawl-delay: .5\n", ourUA, 500 * time.Millisecond, true},
		{"unit suffix", "User-agent: *\nCrawl-delay: 10s\n", ourUA, 10 * time.Second, true},
		{"spelling", "User-agent: *\nCrawldelay: 3\n", ourUA, 3 * time.Second, true},
		{"zero", "User-agent: *\nCrawl-delay: 0\n", ourUA, 0, true},
		{"exponent not read", "User-agent: *\nCrawl-delay: 1e400\n", ourUA, time.Second, true},
		{"enormous capped", "User-agent: *\nCrawl-delay: 99999999999999999999999\n", ourUA, MaxCrawlDelay, true},
		{"last wins", "User-agent: *\nCrawl-delay: 1\nCrawl-delay: 4\n", ourUA, 4 * time.Second, true},
		{"bad text", "User-agent: *\nCrawl-delay: soon\n", ourUA, 0, false},
		{"negative", "User-agent: *\nCrawl-delay: -5\n", ourUA, 0, false},
		{"two dots", "User-agent: *\nCrawl-delay: 1.2.3\n", ourUA, 0, false},
		{"empty", "User-agent: *\nCrawl-delay:\n", ourUA, 0, false},
		{"before user-agent", "Crawl-delay: 5\nUser-agent: *\nDisallow: /x\n", ourUA, 0, false},
		{"bad value keeps rules", "User-agent: *\nCrawl-delay: x\nCrawl-delay: 7\n", ourUA, 7 * time.Second, true},
		{"named group only", "User-agent: *\nCrawl-delay: 9\nUser-agent: trawler\nDisallow: /x\n", ourUA, 0, false},
		{"named group delay", "User-agent: *\nCrawl-delay: 9\nUser-agent: trawler\nCrawl-delay: 2\n", ourUA, 2 * time.Second, true},
		{"no group", "User-agent: other\nCrawl-delay: 9\n", ourUA, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := Parse(200, []byte(tt.robots)).CrawlDelay(tt.ua)
			if d != tt.want || ok != tt.ok {
				t.Errorf("CrawlDelay = %v, %v; want %v, %v", d, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSitemaps(t *testing.T) {
	robots := "Sitemap: https://example.com/a.xml\n" +
		"User-agent: *\nDisallow: /x\n" +
		"sitemap:   https://example.com/b.xml  # trailing comment\n" +
		"SITEMAP: https://example.com/a.xml\n" +
		"Sitemap:\n" +
		"Sitemap: relative/c.xml\n"
	got := Parse(200, []byte(robots)).Sitemaps()
	want := []string{"https://example.com/a.xml", "https://example.com/b.xml", "relative/c.xml"}
	if !slices.Equal(got, want) {
		t.Fatalf("Sitemaps = %q, want %q", got, want)
	}
	got[0] = "changed"
	if again := Parse(200, []byte(robots)).Sitemaps(); again[0] != want[0] {
		t.Errorf("Sitemaps shares its slice")
	}

	var many strings.Builder
	for i := range MaxSitemaps + 50 {
		fmt.Fprintf(&many, "Sitemap: https://example.com/s%d.xml\n", i)
	}
	maps := Parse(200, []byte(many.String())).Sitemaps()
	if len(maps) != MaxSitemaps || maps[MaxSitemaps-1] != fmt.Sprintf("https://example.com/s%d.xml", MaxSitemaps-1) {
		t.Errorf("got %d sitemaps ending %q, want the first %d", len(maps), maps[len(maps)-1], MaxSitemaps)
	}
}

func TestParseStatus(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /\n")
	tests := []struct {
		status int
		want   bool
	}{
		{200, false}, {206, false}, {100, true}, {301, true}, {304, true},
		{401, true}, {403, true}, {404, true}, {410, true}, {999, true},
		{500, false}, {503, false}, {0, false}, {-2, false}, {-61, false},
	}
	for _, tt := range tests {
		if got := Parse(tt.status, body).Allowed(ourUA, "/x"); got != tt.want {
			t.Errorf("Parse(%d).Allowed = %v, want %v", tt.status, got, tt.want)
		}
	}
}

func TestBadBodies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	binary := make([]byte, 64<<10)
	for i := range binary {
		binary[i] = byte(rng.UintN(256))
	}
	huge := bytes.Repeat([]byte("User-agent: *\nDisallow: /secret\n"), 10<<20/32)
	tests := []struct {
		name string
		body []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"whitespace", []byte(" \n\t\r\n ")},
		{"garbage", []byte("::::\n:\n#\n<<<>>>\nUser-agent\nDisallow\n")},
		{"html page", []byte("<!doctype html><html><body><h1>Not Found</h1></body></html>")},
		{"binary", binary},
		{"nul bytes", []byte("User-agent: *\x00\nDisallow: /\x00x\n")},
		{"invalid utf8", []byte("User-agent: \xff\xfe\nDisallow: /\xc3\x28\n")},
		{"10 MB", huge},
		{"one endless line", bytes.Repeat([]byte("a"), 10<<20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse(200, tt.body)
			if r == nil {
				t.Fatal("Parse returned nil")
			}
			_ = r.Allowed(ourUA, "/x")
			_, _ = r.CrawlDelay(ourUA)
			if n := len(r.Sitemaps()); n > MaxSitemaps {
				t.Errorf("%d sitemaps", n)
			}
		})
	}
}

func TestBodyLimit(t *testing.T) {
	huge := bytes.Repeat([]byte("User-agent: *\nDisallow: /secret\n"), 10<<20/32)
	r := Parse(200, huge)
	if r.Allowed(ourUA, "/secret") {
		t.Error("rules before the limit lost")
	}
	if n := len(r.wildcard.rules); n > MaxBodyBytes/len("Disallow: /secret\n") {
		t.Errorf("%d rules kept from a 10 MB body; the 500 KiB limit was not applied", n)
	}

	// A rule past the limit is not read.
	pad := bytes.Repeat([]byte("# padding\n"), MaxBodyBytes/10)
	late := append([]byte("User-agent: *\n"), pad...)
	late = append(late, "Disallow: /late\n"...)
	if !Parse(200, late).Allowed(ourUA, "/late") {
		t.Error("a rule past MaxBodyBytes was applied")
	}

	// A line cut at the limit is dropped, not read as a shorter pattern.
	head := []byte("User-agent: *\n")
	fill := bytes.Repeat([]byte("#"), MaxBodyBytes-len(head)-len("Disallow: /p")-1)
	cut := slices.Concat(head, fill, []byte("\nDisallow: /private-area\n"))
	if !Parse(200, cut).Allowed(ourUA, "/public") {
		t.Error("a rule cut at MaxBodyBytes was applied as a shorter prefix")
	}
}

func TestConcurrentAgents(t *testing.T) {
	r := Parse(200, []byte(groupsRobots))
	agents := map[string]bool{"denybot": false, "allowbot1": true, "anonbot": true}
	done := make(chan string, 4*len(agents))
	for ua, want := range agents {
		for range 4 {
			go func() {
				for range 1000 {
					if r.Allowed(ua, "/path") != want {
						done <- ua
						return
					}
				}
				done <- ""
			}()
		}
	}
	for range 4 * len(agents) {
		if ua := <-done; ua != "" {
			t.Errorf("%s got another agent's rules", ua)
		}
	}
}

// FuzzParse checks that no body or path panics and that a parsed rule set
// gives the same answer twice (the group memo must not leak between agents).
func FuzzParse(f *testing.F) {
	f.Add([]byte(groupsRobots), "Mozilla allowbot2", "/ok?butno")
	f.Add([]byte("User-agent: *\nDisallow: /*a*b*$\nAllow: /$\n"), ourUA, "/xaab")
	f.Add([]byte("<pre>\xef\xbb\xbfSitemap: x\r\nCrawl-delay: 1..\n"), "", "")
	f.Fuzz(func(t *testing.T, body []byte, ua, path string) {
		r := Parse(200, body)
		first := r.Allowed(ua, path)
		_ = r.Allowed("other", path)
		if r.Allowed(ua, path) != first {
			t.Fatal("Allowed changed between calls")
		}
		if len(r.Sitemaps()) > MaxSitemaps {
			t.Fatal("too many sitemaps")
		}
	})
}
