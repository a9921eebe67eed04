// Package profiles ships the standard crawl profiles (frequent, domain,
// demo) inside the binary, so `trawler demo` and `--profile demo` work
// without the source tree.
package profiles

import "embed"

// FS holds every *.yaml profile of this directory.
//
//go:embed *.yaml
var FS embed.FS
