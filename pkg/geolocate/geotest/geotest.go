// Package geotest writes small GeoIP2 country databases for tests, with
// MaxMind's own writer, so tests exercise the real reader on a real .mmdb
// file without shipping GeoLite2 (whose licence forbids redistribution).
package geotest

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// WriteDB writes a GeoLite2-City-typed database to dir/name mapping each
// network (CIDR) to an ISO country code, and returns its path. Reserved
// ranges such as 127.0.0.0/8 are allowed, since the synthetic web lives
// there.
func WriteDB(t testing.TB, dir, name string, networks map[string]string) string {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType:            "GeoLite2-City",
		IncludeReservedNetworks: true,
		Languages:               []string{"en"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, cc := range networks {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatalf("network %q: %v", cidr, err)
		}
		rec := mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(cc)}}
		if err := tree.Insert(n, rec); err != nil {
			t.Fatalf("insert %s: %v", cidr, err)
		}
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
