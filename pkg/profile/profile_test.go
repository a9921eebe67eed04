package profile

import (
	"path/filepath"
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
		{name: "unknown key", yaml: "politeness:\n  minDelay: 10\n", wantErr: "line 2: field minDelay not found"},
		{name: "wrong type", yaml: "scope:\n  maxHops: many\n", wantErr: "line 2"},
		{name: "bad relation", yaml: "politeness:\n  minDelayMs: 5000\n  maxDelayMs: 10\n", wantErr: "minDelayMs (5000) <= maxDelayMs (10)"},
		{name: "bad prefix", yaml: "warc:\n  prefix: 'a b'\n", wantErr: "warc.prefix"},
		{name: "not a map", yaml: "- 1\n", wantErr: "cannot unmarshal"},
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
