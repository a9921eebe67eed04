// Package profiles ships the standard crawl profiles (frequent, domain,
// demo), the standard sheet sets (sheets/*.yaml, e.g. the UK Web Archive's
// "ukwa" set) and the SURT files they refer to inside the binary, so
// `trawler demo` and `--profile demo` work without the source tree.
package profiles

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// FS holds every profile (*.yaml), sheet set (sheets/*.yaml) and SURT file
// (*.txt) of this directory.
//
//go:embed *.yaml sheets/*.yaml *.txt
var FS embed.FS

// SheetSet returns the shipped sheet set called name (sheets/NAME.yaml), the
// document a profile's `sheets.include` list refers to.
func SheetSet(name string) ([]byte, error) {
	if name == "" || strings.ContainsAny(name, `/\.`) {
		return nil, fmt.Errorf("sheet set %q: want a shipped set name such as \"ukwa\" (one of %v)", name, SheetSetNames())
	}
	b, err := FS.ReadFile(path.Join("sheets", name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("sheet set %q: no such shipped set (have %v)", name, SheetSetNames())
	}
	return b, nil
}

// SheetSetNames lists the shipped sheet sets, sorted.
func SheetSetNames() []string {
	entries, _ := fs.ReadDir(FS, "sheets")
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
