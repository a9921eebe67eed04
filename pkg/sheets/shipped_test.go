package sheets

import (
	"bytes"
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/profiles"
)

// shipped loads a shipped profile from the embedded copy the binary uses.
func shipped(t *testing.T, name string) profile.Profile {
	t.Helper()
	b, err := profiles.FS.ReadFile(name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := profile.Default()
	if err := profile.Decode(bytes.NewReader(b), &p); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

func TestShippedProfilesLoad(t *testing.T) {
	files, err := fs.Glob(profiles.FS, "*.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("shipped profiles: %v %v", files, err)
	}
	for _, f := range files {
		p := shipped(t, strings.TrimSuffix(f, ".yaml"))
		s, err := New(context.Background(), p, Options{})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		// Every association applies cleanly to its profile.
		for _, a := range p.Sheets.Associations() {
			for _, raw := range a.SurtPrefixes {
				pfx, _ := Prefix(raw)
				for _, ap := range s.Explain(pfx) {
					if ap.Skipped != "" {
						t.Errorf("%s: %s at %s skipped: %s", f, ap.Sheet, ap.Prefix, ap.Skipped)
					}
				}
			}
		}
	}
	if got := profiles.SheetSetNames(); !slices.Equal(got, []string{"ukwa"}) {
		t.Errorf("sheet sets %q", got)
	}
}

// The UKWA set has every sheet ARCHITECTURE.md section 9 lists, each with
// UKWA's values (ukwa-heritrix jobs/frequent/sheets.xml).
func TestUKWASheetSet(t *testing.T) {
	base := shipped(t, "frequent")
	set, err := profile.LoadSheetSet("ukwa")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]profile.Sheet{}
	for _, sh := range set {
		byName[sh.Name] = sh
	}
	tests := []struct {
		name  string
		check func(p profile.Profile) bool
	}{
		{"ignoreRobots", func(p profile.Profile) bool { return p.Robots.Policy == profile.RobotsIgnore }},
		{"noLimit", func(p profile.Profile) bool { return p.Quotas.ServerMaxSuccessKb == -1 && p.Fetch.MaxLengthBytes == 0 }},
		{"higherLimit", func(p profile.Profile) bool { return p.Quotas.ServerMaxSuccessKb == 2097152 }},
		{"noMaxHops", func(p profile.Profile) bool { return p.Scope.MaxHops == -1 }},
		{"resourceScope", func(p profile.Profile) bool { return p.Scope.MaxHops == 1 }},
		{"subdomainsScope", func(p profile.Profile) bool { return p.Scope == base.Scope }},
		{"plus1Scope", func(p profile.Profile) bool { return p.Scope == base.Scope }},
		{"blockAll", func(p profile.Profile) bool { return p.Preselector.BlockAll }},
		{"noForms", func(p profile.Profile) bool { return p.Extract.IgnoreFormActionUrls }},
		{"noCookies", func(p profile.Profile) bool { return p.Fetch.IgnoreCookies }},
		{"noJavascriptExtraction", func(p profile.Profile) bool { return !p.Extract.Javascript }},
		{"fast-2ps", func(p profile.Profile) bool {
			return p.Politeness == delays(base, 1, 500, 500, 1)
		}},
		{"fast-10ps", func(p profile.Profile) bool {
			return p.Politeness == delays(base, 1, 100, 100, 1)
		}},
		{"extraPolite", func(p profile.Profile) bool {
			return p.Politeness == delays(base, 8, 10000, 60000, 60)
		}},
		{"crawlLimited", func(p profile.Profile) bool { return p.Quotas.HostMaxFetchResponses == 25 }},
		{"recrawl-1hr", recrawl(3600)},
		{"recrawl-1day", recrawl(86400)},
		{"recrawl-1week", recrawl(7 * 86400)},
		{"recrawl-27days", recrawl(27 * 86400)},
		{"recrawl-4weeks", recrawl(28 * 86400)},
		{"recrawl-12weeks", recrawl(84 * 86400)},
		{"recrawl-24weeks", recrawl(168 * 86400)},
		{"recrawl-365days", recrawl(365 * 86400)},
		{"recrawl-adaptive", func(p profile.Profile) bool {
			return p.Frontier.RecrawlAdaptive && p.Frontier.RecrawlIntervalSeconds == base.Frontier.RecrawlIntervalSeconds
		}},
		{"parallel-queues-2", func(p profile.Profile) bool { return p.Frontier.ParallelQueues == 2 }},
		{"parallel-queues-4", func(p profile.Profile) bool { return p.Frontier.ParallelQueues == 4 }},
		{"parallel-queues-8", func(p profile.Profile) bool { return p.Frontier.ParallelQueues == 8 }},
	}
	if len(byName) != len(tests) {
		t.Errorf("the set has %d sheets, the table %d", len(byName), len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sh, ok := byName[tc.name]
			if !ok {
				t.Fatal("missing from the ukwa set")
			}
			if sh.Origin != "set:ukwa" {
				t.Errorf("origin %q", sh.Origin)
			}
			p, err := base.WithSettings(sh.Settings)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(p) {
				t.Fatalf("unexpected settings %+v", p)
			}
		})
	}
}

// delays is base's politeness with the delay settings a speed sheet sets;
// the back-off settings stay the profile's.
func delays(base profile.Profile, factor float64, minMs, maxMs, crawlDelay int64) profile.Politeness {
	p := base.Politeness
	p.DelayFactor, p.MinDelayMs, p.MaxDelayMs, p.RespectCrawlDelayUpToSeconds = factor, minMs, maxMs, crawlDelay
	return p
}

func recrawl(seconds int64) func(profile.Profile) bool {
	return func(p profile.Profile) bool { return p.Frontier.RecrawlIntervalSeconds == seconds }
}

// The frequent and domain profiles differ where UKWA's crawls differ.
func TestFrequentAndDomainProfiles(t *testing.T) {
	fc, dc := shipped(t, "frequent"), shipped(t, "domain")
	if fc.Frontier.MaxRetries != 10 || fc.Frontier.RetryDelaySeconds != 900 || fc.Frontier.SeenFilter != profile.SeenRecently {
		t.Errorf("frequent frontier %+v", fc.Frontier)
	}
	if dc.Frontier.MaxRetries != 3 || dc.Frontier.RetryDelaySeconds != 20 || dc.Frontier.SeenFilter != profile.SeenBloom ||
		dc.Frontier.BloomExpectedURIs != 250_000_000 {
		t.Errorf("domain frontier %+v", dc.Frontier)
	}
	for _, p := range []profile.Profile{fc, dc} {
		if p.Quotas.ServerMaxSuccessKb != 524288 || p.Robots.Policy != profile.RobotsClassic || p.Scope.MaxHops != 20 {
			t.Errorf("%s: quotas %+v robots %s", p.Crawl.Name, p.Quotas, p.Robots.Policy)
		}
	}
	s, err := New(context.Background(), fc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url    string
		sheets []string
	}{
		{"http://intranet.bl.uk/x", []string{"blockAll"}},
		{"https://www.bbc.co.uk/news", []string{"noLimit"}},
		{"http://www.googlelawsuit.co.uk/", []string{"noForms", "noJavascriptExtraction"}},
		{"http://www.webarchive.org.uk/wayback/archive/", []string{"blockAll"}},
		{"http://www.webarchive.org.uk/about", nil},
		{"http://example.com/", nil},
	}
	for _, tc := range tests {
		if got := s.ForURL(tc.url).Sheets; !slices.Equal(got, tc.sheets) {
			t.Errorf("%s: sheets %q, want %q", tc.url, got, tc.sheets)
		}
	}
	surts, err := profiles.FS.ReadFile("domain-surts.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+uk\n", "+scot\n", "+wales\n", "+cymru\n", "+london\n"} {
		if !strings.Contains(string(surts), want) {
			t.Errorf("domain-surts.txt lacks %q", want)
		}
	}
}
