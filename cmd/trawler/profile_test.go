package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/sheets"
)

func writeProfile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestProfileCheckShipped(t *testing.T) {
	for _, args := range [][]string{
		{"profile", "check", "frequent"},
		{"profile", "check", "domain"},
		{"profile", "check", "demo"},
		{"profile", "check", "../../profiles/frequent.yaml"},
		{"profile", "check", "--url", "http://example.org/", "domain"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, ": OK\n") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	_, out, _ := runCLI(t, "profile", "check", "frequent")
	if !strings.Contains(out, "27 sheets (sets [ukwa], 0 defined here); 7 associations over 44 SURT prefixes") {
		t.Errorf("summary: %s", out)
	}
}

const explainProfile = `crawl:
  name: test
sheets:
  include: [ukwa]
  definitions:
    slowSite:
      politeness.minDelayMs: 20000
      disposition.maxDelayMs: 60000
      queueAssignmentPolicy.deferToPrevious: true
    quick:
      politeness.maxDelayMs: 10000
  associations:
    - surtPrefixes: ['http://(uk,co,example,']
      sheets: [slowSite, ignoreRobots]
    - surtPrefixes: ['https://www.example.co.uk/shop/']
      sheets: [blockAll, quick]
`

// --url shows the sheets in the order applied with the matching prefix,
// the settings that differ and why a sheet did not apply.
func TestProfileCheckURL(t *testing.T) {
	path := writeProfile(t, explainProfile)
	code, out, errOut := runCLI(t, "profile", "check", path,
		"--url", "https://www.example.co.uk/shop/item/1", "--url", "http://other.example.org/")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wants := []string{
		`surt\s+http://\(uk,co,example,www,\)/shop/item/1`,
		`\n  1\. slowSite at http://\(uk,co,example, \(profile\): applied\n`,
		`\n +no effect: queueAssignmentPolicy.deferToPrevious: Trawler keys queues by host`,
		`\n  2\. ignoreRobots at http://\(uk,co,example, \(profile\): applied\n`,
		`\n  3\. blockAll at http://\(uk,co,example,www,\)/shop/ \(profile\): applied\n`,
		// quick's maxDelayMs 10000 is below slowSite's minDelayMs 20000.
		`\n  4\. quick at http://\(uk,co,example,www,\)/shop/ \(profile\): SKIPPED: politeness: need 0 <= minDelayMs \(20000\) <= maxDelayMs \(10000\)\n`,
		`politeness\.minDelayMs\s+3000 -> 20000`,
		`politeness\.maxDelayMs\s+30000 -> 60000`,
		`robots\.policy\s+obey -> ignore`,
		`preselector\.blockAll\s+false -> true`,
		// Default rules: no seeds given, so nothing accepts it.
		`scope\s+REJECT by rule #1 RejectDecideRule`,
		`url\s+http://other.example.org/\nsurt\s+http://\(org,example,other,\)/\nsheets\s+none apply\nsettings\s+as in the profile`,
	}
	for _, w := range wants {
		if !regexp.MustCompile(w).MatchString(out) {
			t.Errorf("output lacks %s\n%s", w, out)
		}
	}
}

// --url with --seed, --hops and --via says which rule decides scope, under
// the URL's effective thresholds: a sheet lowering maxHops turns the same
// URL from ACCEPT by the seed prefix into REJECT by TooManyHops.
func TestProfileCheckScope(t *testing.T) {
	path := writeProfile(t, `crawl: {name: t}
sheets:
  definitions:
    shallow: {scope.maxHops: 1}
  associations:
    - surtPrefixes: ['http://(org,example,www,)/deep/']
      sheets: [shallow]
`)
	for _, tc := range []struct{ url, want string }{
		{"https://www.example.org/a/b", `scope\s+ACCEPT by rule #2 SurtPrefixedDecideRule \(hops "LL"`},
		{"https://www.example.org/deep/b", `scope\s+REJECT by rule #\d+ TooManyHopsDecideRule \(hops "LL"`},
		{"https://elsewhere.example.net/x", `scope\s+REJECT by rule #1 RejectDecideRule`},
	} {
		code, out, errOut := runCLI(t, "profile", "check", path, "--seed", "https://www.example.org/",
			"--url", tc.url, "--hops", "LL", "--via", "https://www.example.org/")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.url, code, errOut)
		}
		if !regexp.MustCompile(tc.want).MatchString(out) {
			t.Errorf("%s: output lacks %s\n%s", tc.url, tc.want, out)
		}
	}
}

// A bad profile exits non-zero naming each offending key and its line.
func TestProfileCheckErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"unknown key", "politeness:\n  minDelay: 3\n", []string{"line 2: politeness.minDelay: no such setting (did you mean politeness.minDelayMs?)"}},
		{"range errors get the key's line", "crawl:\n  name: x\npoliteness:\n  minDelayMs: 5000\n  maxDelayMs: 10\nfrontier:\n  seenFilter: nope\n",
			[]string{"line 3: politeness: need 0 <= minDelayMs (5000) <= maxDelayMs (10)", `line 7: frontier.seenFilter: "nope" is not`}},
		{"unknown sheet key", "sheets:\n  definitions:\n    mine:\n      politeness.minDelay: 5\n",
			[]string{`sheets.definitions.mine: line 4: unknown setting "politeness.minDelay"`}},
		{"unknown sheet name", "sheets:\n  associations:\n    - {surtPrefixes: ['http://(uk,'], sheets: [nope]}\n",
			[]string{`sheets.associations: line 3: no sheet named "nope"`}},
		{"sheet contradicts profile", "sheets:\n  definitions:\n    slow: {politeness.minDelayMs: 50000}\n",
			[]string{"sheet slow (profile, line 3) does not apply to this profile"}},
		{"bad yaml", "politeness: [\n", []string{"is invalid", "line 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "profile", "check", writeProfile(t, tc.body))
			if code != 1 || out != "" {
				t.Fatalf("exit %d, stdout %q", code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

func TestProfileCheckUsage(t *testing.T) {
	good := writeProfile(t, "crawl:\n  name: x\n")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"profile"}, 2, "usage: trawler profile check"},
		{[]string{"profile", "lint", good}, 1, `unknown verb "lint"`},
		{[]string{"profile", "check"}, 2, "usage: trawler profile check"},
		{[]string{"profile", "check", good, "extra"}, 2, "usage: trawler profile check"},
		{[]string{"profile", "check", "--bogus", good}, 2, "unknown flag --bogus"},
		{[]string{"profile", "check", good, "--url", "ftp://example.org/"}, 1, "want an http or https URL"},
		{[]string{"profile", "check", "no/such/file.yaml"}, 1, "no such file and no shipped profile"},
		{[]string{"profile", "check", "--help"}, 0, "-url"},
	}
	for _, tc := range tests {
		code, _, errOut := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}

// With --redis, the sheets a launch message attached (as a worker stores
// them) are explained too.
func TestProfileCheckLaunchAttached(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	p := profile.Default()
	if err := profile.Decode(strings.NewReader("sheets:\n  include: [ukwa]\n"), &p); err != nil {
		t.Fatal(err)
	}
	w, err := sheets.New(ctx, p, sheets.Options{Redis: rdb, KeyPrefix: "{dc}:"})
	if err != nil {
		t.Fatal(err)
	}
	l := messages.Launch{URL: "https://www.example.org/", IsSeed: true, Sheets: []string{"ignoreRobots"},
		TargetSheet: map[string]json.RawMessage{"queueAssignmentPolicy.parallelQueues": json.RawMessage("2")}}
	if _, err := w.AttachLaunch(ctx, l); err != nil {
		t.Fatal(err)
	}
	path := writeProfile(t, "sheets:\n  include: [ukwa]\n")
	code, out, errOut := runCLI(t, "profile", "check", path, "--redis", rdb.Options().Addr, "--frontier", "dc",
		"--url", "http://www.example.org/page")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, w := range []string{
		"1. ignoreRobots at http://(org,example,www,)/ (launch): applied",
		"2. targetSheet at http://(org,example,www,)/ (launch): applied",
		"frontier.parallelQueues  1 -> 2",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q\n%s", w, out)
		}
	}
	// Another frontier's keys are not read.
	_, out, _ = runCLI(t, "profile", "check", path, "--redis", rdb.Options().Addr, "--url", "http://www.example.org/page")
	if !strings.Contains(out, "sheets    none apply") {
		t.Errorf("fc-npld saw dc's sheets:\n%s", out)
	}
	if code, _, errOut := runCLI(t, "profile", "check", path, "--redis", "nohostport"); code != 1 || !strings.Contains(errOut, "want host:port") {
		t.Errorf("bad --redis: %d %s", code, errOut)
	}
}
