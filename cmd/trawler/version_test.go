package main

import (
	"runtime/debug"
	"testing"
)

// TestResolveVersion: ldflags win; without them the VCS stamp of a build
// in a checkout names the commit (dirty or not) and its time.
func TestResolveVersion(t *testing.T) {
	vcs := func(main string, kv ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/trawler-crawl/trawler", Version: main}}
		for i := 0; i+1 < len(kv); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return info
	}
	const rev = "164a8a3f1c2e9d0b7a6e5f4c3b2a1908d7e6f5a4"
	tests := []struct {
		name         string
		stamped      string
		info         *debug.BuildInfo
		want, wantAt string
	}{
		{"ldflags win", "v1.4.0", vcs("(devel)", "vcs.revision", rev), "v1.4.0", ""},
		{"clean checkout", "dev", vcs("(devel)", "vcs", "git", "vcs.revision", rev,
			"vcs.time", "2026-11-27T10:00:00Z", "vcs.modified", "false"), "164a8a3f1c2e", "2026-11-27T10:00:00Z"},
		{"uncommitted changes", "dev", vcs("(devel)", "vcs.revision", rev, "vcs.modified", "true"),
			"164a8a3f1c2e-dirty", ""},
		{"short revision kept whole", "", vcs("(devel)", "vcs.revision", "abc123"), "abc123", ""},
		{"module install", "dev", vcs("v1.2.3"), "v1.2.3", ""},
		{"no VCS stamp (-buildvcs=false)", "dev", vcs("(devel)", "-compiler", "gc"), "dev", ""},
		{"no build info", "dev", nil, "dev", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, at := resolveVersion(tc.stamped, tc.info)
			if got != tc.want || at != tc.wantAt {
				t.Errorf("resolveVersion = %q, %q; want %q, %q", got, at, tc.want, tc.wantAt)
			}
		})
	}
}
