package profile

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name, yaml, wantErr string
		check               func(Profile) bool
	}{
		{name: "empty keeps defaults", yaml: "", check: func(p Profile) bool { return p.Politeness.MinDelayMs == 3000 }},
		{name: "override", yaml: "politeness:\n  minDelayMs: 10\n  maxDelayMs: 20\n",
			check: func(p Profile) bool { return p.Politeness.MinDelayMs == 10 && p.Politeness.DelayFactor == 5 }},
		{name: "unknown key", yaml: "politeness:\n  minDelay: 10\n",
			wantErr: "line 2: politeness.minDelay: no such setting (did you mean politeness.minDelayMs?)"},
		{name: "unknown key, case", yaml: "politeness:\n  minDelayMS: 10\n",
			wantErr: "line 2: politeness.minDelayMS: no such setting (did you mean politeness.minDelayMs?)"},
		{name: "unknown key, nothing near", yaml: "fetch:\n  colour: blue\n", wantErr: "line 2: fetch.colour: no such setting"},
		{name: "unknown key in a list item", yaml: "credentials:\n  http:\n    - {domain: x, passwrd: y}\n",
			wantErr: "line 3: credentials.http[0].passwrd: no such setting (did you mean credentials.http[0].password?)"},
		{name: "wrong type", yaml: "scope:\n  maxHops: many\n", wantErr: `line 2: scope.maxHops: "many" is not a whole number`},
		{name: "wrong type, long value", yaml: "politeness:\n  minDelayMs: ten thousand and one\n",
			wantErr: `line 2: politeness.minDelayMs: "ten thousand and one" is not a whole number`},
		{name: "wrong type, a list", yaml: "politeness:\n  maxDelayMs: [1]\n", wantErr: "line 2: politeness.maxDelayMs: want a whole number, got a list"},
		{name: "wrong type, a float", yaml: "politeness:\n  delayFactor: fast\n", wantErr: `line 2: politeness.delayFactor: "fast" is not a number`},
		{name: "wrong type, a bool", yaml: "fetch:\n  sendReferer: maybe\n", wantErr: `line 2: fetch.sendReferer: "maybe" is not true or false`},
		{name: "a section given a value", yaml: "frontier: 3\n", wantErr: `line 1: frontier: "3" is not a mapping (a section)`},
		{name: "bad relation", yaml: "politeness:\n  minDelayMs: 5000\n  maxDelayMs: 10\n", wantErr: "minDelayMs (5000) <= maxDelayMs (10)"},
		{name: "bad prefix", yaml: "warc:\n  prefix: 'a b'\n", wantErr: "warc.prefix"},
		{name: "not a map", yaml: "- 1\n", wantErr: "cannot unmarshal"},
		{name: "negative novel urls", yaml: "limits:\n  maxNovelUrls: -1\n", wantErr: "limits: must be >= 0"},
		{name: "negative novel bytes", yaml: "limits:\n  maxNovelBytes: -5\n", wantErr: "limits: must be >= 0"},
		{name: "novel limits", yaml: "limits:\n  maxNovelUrls: 10\n  maxNovelBytes: 2048\n",
			check: func(p Profile) bool { return p.Limits.MaxNovelUrls == 10 && p.Limits.MaxNovelBytes == 2048 }},
		{name: "frontier shards default", yaml: "", check: func(p Profile) bool { return p.Frontier.Shards == 1 }},
		{name: "frontier shards", yaml: "frontier:\n  shards: 12\n", check: func(p Profile) bool { return p.Frontier.Shards == 12 }},
		{name: "frontier shards zero", yaml: "frontier:\n  shards: 0\n", wantErr: "frontier.shards: 0 is not in 1..1024"},
		{name: "frontier shards too many", yaml: "frontier:\n  shards: 1025\n", wantErr: "frontier.shards: 1025 is not in 1..1024"},
		{name: "sealed statistics kept 30 days by default", yaml: "",
			check: func(p Profile) bool { return p.Provenance.KeepSealedDays == 30 }},
		{name: "sealed statistics kept for ever", yaml: "provenance:\n  keepSealedDays: 0\n",
			check: func(p Profile) bool { return p.Provenance.KeepSealedDays == 0 }},
		{name: "sealed statistics negative", yaml: "provenance:\n  keepSealedDays: -1\n",
			wantErr: "provenance.keepSealedDays: -1 must be >= 0"},
		{name: "provenance not streaming by default", yaml: "",
			check: func(p Profile) bool { return !p.Provenance.Streaming }},
		{name: "provenance streaming", yaml: "provenance:\n  streaming: true\n",
			check: func(p Profile) bool { return p.Provenance.Streaming }},
		{name: "sealed statistics misspelt", yaml: "provenance:\n  keepSealedDay: 3\n",
			wantErr: "line 2: provenance.keepSealedDay: no such setting (did you mean provenance.keepSealedDays?)"},
		{name: "fetch header defaults", yaml: "",
			check: func(p Profile) bool { return p.Fetch.SendReferer && !p.Fetch.AcceptCompression }},
		{name: "fetch header settings", yaml: "fetch:\n  sendReferer: false\n  acceptCompression: true\n",
			check: func(p Profile) bool { return !p.Fetch.SendReferer && p.Fetch.AcceptCompression }},
		{name: "stream defaults", yaml: "",
			check: func(p Profile) bool {
				return p.Extract.Streams.Variants == "extremes" && p.Extract.Streams.MaxSegments == 2000
			}},
		{name: "stream settings", yaml: "extract:\n  streams:\n    variants: all\n    maxSegments: 10\n",
			check: func(p Profile) bool {
				return p.Extract.Streams.Variants == "all" && p.Extract.Streams.MaxSegments == 10
			}},
		{name: "stream variants unknown", yaml: "extract:\n  streams:\n    variants: best\n",
			wantErr: `extract.streams.variants: "best" is not one of extremes, all, highest, lowest, none`},
		{name: "render media defaults", yaml: "",
			check: func(p Profile) bool {
				return p.Render.Media.Play && p.Render.Media.YtDlp == "media" && p.Render.Media.YtDlpTimeoutSeconds == 300
			}},
		{name: "render media ytDlp unknown", yaml: "render:\n  media:\n    ytDlp: sometimes\n",
			wantErr: `render.media.ytDlp: "sometimes" is not off, media or always`},
		{name: "render media timeout bounded", yaml: "render:\n  media:\n    ytDlpTimeoutSeconds: 0\n",
			wantErr: "render.media.ytDlpTimeoutSeconds: 0 not in 1..3600"},
		{name: "stream segments bounded", yaml: "extract:\n  streams:\n    maxSegments: 100000\n",
			wantErr: "extract.streams.maxSegments: 100000 not in 0..14400"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Default()
			err := Decode(strings.NewReader(tc.yaml), &p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(p) {
				t.Fatalf("unexpected profile %+v", p)
			}
		})
	}
}

func TestLoadShippedProfiles(t *testing.T) {
	files, _ := filepath.Glob("../../profiles/*.yaml")
	if len(files) == 0 {
		t.Fatal("no shipped profiles found")
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("want error for missing file")
	}
}

func TestUserAgent(t *testing.T) {
	p := Default()
	p.Crawl.OperatorContactURL = "https://ex.org/c"
	if ua := p.UserAgent("1.2"); ua != "Mozilla/5.0 (compatible; trawler/1.2 +https://ex.org/c)" {
		t.Fatal(ua)
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		key, value, wantErr string
		check               func(Profile) bool
	}{
		{key: "politeness.minDelayMs", value: "100", check: func(p Profile) bool { return p.Politeness.MinDelayMs == 100 }},
		{key: "fetch.allowPrivateAddresses", value: "true", check: func(p Profile) bool { return p.Fetch.AllowPrivateAddresses }},
		{key: "crawl.name", value: "dc2026", check: func(p Profile) bool { return p.Crawl.Name == "dc2026" }},
		// Named by the key given, with no line: the document is made
		// from the key, and its lines would mislead.
		{key: "politeness.minDelay", value: "1", wantErr: "politeness.minDelay: no such setting (did you mean politeness.minDelayMs?)"},
		{key: "politeness.minDelayMS", value: "1", wantErr: "politeness.minDelayMS: no such setting (did you mean politeness.minDelayMs?)"},
		{key: "scope.maxHops", value: "lots", wantErr: `scope.maxHops: "lots" is not a whole number`},
		{key: "politeness..x", value: "1", wantErr: "empty key segment"},
		{key: "politeness.minDelayMs", value: "999999", wantErr: "maxDelayMs"},
	}
	for _, tc := range tests {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			p := Default()
			before := p
			err := p.Set(tc.key, tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "line ") {
					t.Errorf("err = %v names a line of a document the operator never saw", err)
				}
				if !reflect.DeepEqual(p, before) {
					t.Fatal("a failed Set changed the profile")
				}
				return
			}
			if err != nil || !tc.check(p) {
				t.Fatalf("err %v, profile %+v", err, p)
			}
			if p.Politeness.DelayFactor != before.Politeness.DelayFactor {
				t.Fatal("Set changed an unrelated setting")
			}
		})
	}
}
