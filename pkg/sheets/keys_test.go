package sheets

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/sheets/beanpath"
)

// Each Heritrix/UKWA bean path sets the profile key with the same meaning,
// converting units where Heritrix's differ.
func TestAliasKeys(t *testing.T) {
	tests := []struct {
		key, value string
		check      func(profile.Profile) bool
		ignored    bool
	}{
		{"queueAssignmentPolicy.parallelQueues", "2", func(p profile.Profile) bool { return p.Frontier.ParallelQueues == 2 }, false},
		{"disposition.minDelayMs", "100", func(p profile.Profile) bool { return p.Politeness.MinDelayMs == 100 }, false},
		{"disposition.delayFactor", "1.5", func(p profile.Profile) bool { return p.Politeness.DelayFactor == 1.5 }, false},
		{"disposition.maxPerHostBandwidthUsageKbSec", "50", func(p profile.Profile) bool { return p.Frontier.MaxPerHostBandwidthUsageKbSec == 50 }, false},
		{"quotaEnforcer.serverMaxSuccessKb", "-1", func(p profile.Profile) bool { return p.Quotas.ServerMaxSuccessKb == -1 }, false},
		{"quotaEnforcer.hostMaxFetchResponses", "25", func(p profile.Profile) bool { return p.Quotas.HostMaxFetchResponses == 25 }, false},
		{"crawlLimiter.maxTimeSeconds", "3600", func(p profile.Profile) bool { return p.Limits.MaxTimeSeconds == 3600 }, false},
		{"metadata.robotsPolicyName", "ignore", func(p profile.Profile) bool { return p.Robots.Policy == profile.RobotsIgnore }, false},
		{"preconditions.robotsValidityDurationSeconds", "60", func(p profile.Profile) bool { return p.Robots.ValidityDurationSeconds == 60 }, false},
		{"preconditions.ipValidityDurationSeconds", "60", func(p profile.Profile) bool { return p.DNS.IPValidityDurationSeconds == 60 }, false},
		{"fetchHttp.maxLengthBytes", "1048576", func(p profile.Profile) bool { return p.Fetch.MaxLengthBytes == 1<<20 }, false},
		{"fetchHttp.ignoreCookies", "true", func(p profile.Profile) bool { return p.Fetch.IgnoreCookies }, false},
		{"fetchHttp.timeoutSeconds", "30", func(p profile.Profile) bool { return p.Fetch.TotalTimeoutSeconds == 30 }, false},
		{"fetchHttp.soTimeoutMs", "20001", func(p profile.Profile) bool { return p.Fetch.ReadTimeoutSeconds == 21 }, false},
		{"preparer.preferenceDepthHops", "2", func(p profile.Profile) bool { return p.Frontier.PreferenceDepthHops == 2 }, false},
		{"recentlySeen.recrawlInterval", "3600", func(p profile.Profile) bool { return p.Frontier.RecrawlIntervalSeconds == 3600 }, false},
		{"hopsCountReject.maxHops", "1", func(p profile.Profile) bool { return p.Scope.MaxHops == 1 }, false},
		{"hopsCountReject.enabled", "false", func(p profile.Profile) bool { return p.Scope.MaxHops == beanpath.NoMaxHops }, false},
		{"hopsCountReject.enabled", "true", func(p profile.Profile) bool { return p.Scope.MaxHops == 20 }, true},
		{"extractorHtml.ignoreFormActionUrls", "true", func(p profile.Profile) bool { return p.Extract.IgnoreFormActionUrls }, false},
		{"extractorHtml.extractJavascript", "false", func(p profile.Profile) bool { return !p.Extract.Javascript }, false},
		{"extractorJs.enabled", "false", func(p profile.Profile) bool { return !p.Extract.Javascript }, false},
		{"preselector.blockAll", "true", func(p profile.Profile) bool { return p.Preselector.BlockAll }, false},
		{"wrenderHttp.enabled", "true", func(p profile.Profile) bool { return p.Render.HandOff }, false},
		{"queueAssignmentPolicy.parallelQueuesRandomAssignment", "true", func(p profile.Profile) bool { return p.Frontier == profile.Default().Frontier }, true},
		{"extractorHtml.extractValueAttributes", "false", func(p profile.Profile) bool { return p.Extract == profile.Default().Extract }, true},
		{"surtPrefixSeedScope.alsoCheckVia", "true", func(p profile.Profile) bool { return p.Scope.MaxHops == 20 }, true},
		{"onDomainAccept.enabled", "true", func(p profile.Profile) bool { return p.Scope.MaxHops == 20 }, true},
		// Native keys pass through.
		{"politeness.maxDelayMs", "5000", func(p profile.Profile) bool { return p.Politeness.MaxDelayMs == 5000 }, false},
		{"frontier.maxRetries", "3", func(p profile.Profile) bool { return p.Frontier.MaxRetries == 3 }, false},
	}
	for _, tc := range tests {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			st, err := profile.SettingFromJSON(tc.key, json.RawMessage(tc.value))
			if err != nil {
				t.Fatal(err)
			}
			r, err := st.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			if (r.Key == "") != tc.ignored || (tc.ignored && r.Note == "") {
				t.Fatalf("resolved %+v, ignored want %v", r, tc.ignored)
			}
			p, err := profile.Default().WithSettings([]profile.Setting{st})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(p) {
				t.Fatalf("setting not applied: %+v", p)
			}
		})
	}
}

// A string holding a number or boolean is converted, as Spring does.
func TestSettingFromJSONStrings(t *testing.T) {
	tests := []struct{ key, raw, wantErr string }{
		{key: "frontier.parallelQueues", raw: `"2"`},
		{key: "fetch.ignoreCookies", raw: `"true"`},
		{key: "robots.policy", raw: `"ignore"`},
		{key: "frontier.parallelQueues", raw: `"two"`, wantErr: "cannot unmarshal !!str `two` into int"},
		{key: "frontier.parallelQueues", raw: `2.5`, wantErr: "2.5 is not a whole number"},
		{key: "frontier.parallelQueues", raw: `2.0`},
		{key: "frontier.parallelQueues", raw: `{"a":1}`, wantErr: "cannot unmarshal !!map into int"},
		{key: "politeness.minDelay", raw: `1`, wantErr: `unknown setting "politeness.minDelay" (no "minDelay" in politeness)`},
		{key: "politeness", raw: `1`, wantErr: "is a section, not a single setting"},
		{key: "sheets.include", raw: `["x"]`, wantErr: "cannot override the sheets section"},
		{key: "quotaEnforcer.nope", raw: `1`, wantErr: "Heritrix bean path for quotas.nope"},
		{key: "fetchHttp.soTimeoutMs", raw: `-5`, wantErr: "milliseconds"},
		{key: "hopsCountReject.enabled", raw: `"maybe"`, wantErr: "want true or false"},
		{key: "nobean", raw: `1`, wantErr: `unknown setting "nobean"`},
	}
	for _, tc := range tests {
		t.Run(tc.key+"="+tc.raw, func(t *testing.T) {
			st, err := profile.SettingFromJSON(tc.key, json.RawMessage(tc.raw))
			if err == nil {
				err = st.Check()
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	if _, err := profile.SettingFromJSON("k", json.RawMessage(`{`)); err == nil {
		t.Fatal("want error for broken JSON")
	}
}

// Bad sheets in a profile fail to load with the sheet, the key and the line.
func TestProfileSheetErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"unknown key", "sheets:\n  definitions:\n    slow:\n      politeness.minDelay: 10\n",
			`sheets.definitions.slow: line 4: unknown setting "politeness.minDelay"`},
		{"unknown bean path", "sheets:\n  definitions:\n    x:\n      disposition.nope: 1\n",
			`sheets.definitions.x: line 4: unknown setting "disposition.nope"`},
		{"null value", "sheets:\n  definitions:\n    x:\n      frontier.parallelQueues:\n",
			`sheets.definitions.x: line 4: setting "frontier.parallelQueues": no value`},
		{"bad value", "sheets:\n  definitions:\n    x:\n      frontier.parallelQueues: lots\n",
			"sheets.definitions.x: line 4: frontier.parallelQueues: cannot unmarshal !!str `lots` into int"},
		{"duplicate key", "sheets:\n  definitions:\n    x:\n      fetch.ignoreCookies: true\n      fetch.ignoreCookies: false\n",
			"line 5: sheets.definitions.x: key fetch.ignoreCookies set twice (first at line 4)"},
		{"duplicate sheet", "sheets:\n  definitions:\n    x: {}\n    x: {}\n", `line 4: sheets.definitions: sheet "x" empty or defined twice`},
		{"unknown sheet in association", "sheets:\n  associations:\n    - surtPrefixes: ['http://(uk,']\n      sheets: [nope]\n",
			`sheets.associations: line 3: no sheet named "nope"`},
		{"empty association", "sheets:\n  include: [ukwa]\n  associations:\n    - sheets: [blockAll]\n",
			"line 4: need at least one of surtPrefixes and of sheets"},
		{"unknown section key", "sheets:\n  defs: {}\n", "line 2: field defs not found in sheets"},
		{"unknown association key", "sheets:\n  associations:\n    - {prefixes: [x]}\n", "field prefixes not found in a sheet association"},
		{"unknown include", "sheets:\n  include: [nosuch]\n", `sheets.include: sheet set "nosuch": no such shipped set (have [ukwa])`},
		{"path include", "sheets:\n  include: [../etc/passwd]\n", "want a shipped set name"},
		{"not a mapping", "sheets: [1]\n", "line 1: sheets: want a mapping"},
		{"definitions not a mapping", "sheets:\n  definitions: [a]\n", "line 2: sheets.definitions: want a mapping"},
		{"sheet not a mapping", "sheets:\n  definitions:\n    a: 3\n", "line 3: sheets.definitions.a: want a mapping"},
		{"include not a list", "sheets:\n  include: {a: 1}\n", "line 2: sheets.include: want a list of strings"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := profile.Default()
			err := profile.Decode(strings.NewReader(tc.yaml), &p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %q", err, tc.want)
			}
		})
	}
}

// The sheets section survives a YAML round trip (config show prints it).
func TestSheetsYAMLRoundTrip(t *testing.T) {
	p := decode(t, orderProfile+"  include: [ukwa]\n")
	var q profile.Profile = profile.Default()
	if err := profile.Decode(strings.NewReader(p.YAML()), &q); err != nil {
		t.Fatalf("re-decode: %v\n%s", err, p.YAML())
	}
	if len(q.Sheets.Definitions()) != 4 || len(q.Sheets.Associations()) != 5 || q.Sheets.Include()[0] != "ukwa" {
		t.Fatalf("round trip lost sheets:\n%s", q.YAML())
	}
	if !profile.Default().Sheets.IsZero() {
		t.Fatal("default profile has sheets")
	}
}
