package main

import (
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=…" (the
// Dockerfile's VERSION); "dev" when it was not. Read it through
// buildVersion, which falls back to the build's VCS stamp.
var version = "dev"

// buildVersion is the version the binary reports (--version, the user
// agent's @VERSION@, warcinfo records, logs): the ldflags version when
// set, else the commit it was built from (see resolveVersion).
func buildVersion() string {
	v, _ := resolveVersion(version, readBuildInfo())
	return v
}

// readBuildInfo is debug.ReadBuildInfo, nil when there is none.
func readBuildInfo() *debug.BuildInfo {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return info
}

// resolveVersion returns the version of a binary stamped with stamped by
// ldflags and built as info says, and when its commit was made ("" when
// unknown). A stamped version other than "dev" wins. Otherwise the VCS
// settings the go command records when it builds in a checkout (a clean
// clone's `go build ./cmd/trawler`) give the commit's first 12 hex digits,
// with "-dirty" when the tree had uncommitted changes, and its time; a
// binary installed as module@version has that version; else "dev".
func resolveVersion(stamped string, info *debug.BuildInfo) (v, committed string) {
	if stamped != "" && stamped != "dev" {
		return stamped, ""
	}
	if info == nil {
		return "dev", ""
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			committed = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		if mv := info.Main.Version; mv != "" && mv != "(devel)" {
			return mv, ""
		}
		return "dev", ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev, committed
}
