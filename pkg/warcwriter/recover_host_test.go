package warcwriter

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestHostFromName(t *testing.T) {
	for _, tc := range []struct {
		name, host string
		ok         bool
	}{
		{"BL-NPLD-20261125173000123-00001-w0.warc.gz", "w0", true},
		{"BL-NPLD-20261125173000123-00001-w0.warc.gz.open", "w0", true},
		{"BL-2024-VIRAL-20261125173000123-123456-crawler-1.example.org.warc.gz", "crawler-1.example.org", true},
		{"BL-20261125173000123-00001-.warc.gz", "", false},
		{"crawl.log", "", false},
		{"BL-2026-00001-w0.warc.gz", "", false},
	} {
		host, ok := HostFromName(tc.name)
		if host != tc.host || ok != tc.ok {
			t.Errorf("HostFromName(%q) = %q, %v; want %q, %v", tc.name, host, ok, tc.host, tc.ok)
		}
	}
	if h, ok := HostFromName(fileName("A-B", fetchDate, 7, "w12")); !ok || h != "w12" {
		t.Errorf("fileName round trip: %q %v", h, ok)
	}
}

// RecoverOpenHost takes only the named host's open files: another host's,
// which a live writer sharing the directory may be writing, stay as they
// are. OpenHosts lists both.
func TestRecoverOpenHost(t *testing.T) {
	dir := t.TempDir()
	mine, _, _ := writeOpenFile(t, dir)
	// The same bytes under another host's name stand for a sibling's file.
	sibling := strings.Replace(mine, "-testhost.warc.gz", "-other.warc.gz", 1)
	b, err := os.ReadFile(mine)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sibling, b, 0o644); err != nil {
		t.Fatal(err)
	}
	hosts, err := OpenHosts(dir)
	if err != nil || !slices.Equal(hosts, []string{"other", "testhost"}) {
		t.Fatalf("OpenHosts: %v %v", hosts, err)
	}
	if _, err := RecoverOpenHost(dir, "", nil); err == nil {
		t.Fatal("RecoverOpenHost with an empty host recovered")
	}
	got, err := RecoverOpenHost(dir, "testhost", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Path != strings.TrimSuffix(mine, openSuffix) {
		t.Fatalf("recovered %+v, want only %s", got, filepath.Base(mine))
	}
	if _, err := os.Stat(sibling); err != nil {
		t.Fatalf("the other host's open file was touched: %v", err)
	}
	if hosts, _ := OpenHosts(dir); !slices.Equal(hosts, []string{"other"}) {
		t.Fatalf("OpenHosts after recovery: %v", hosts)
	}
	if hosts, err := OpenHosts(filepath.Join(dir, "missing")); err != nil || len(hosts) != 0 {
		t.Fatalf("OpenHosts of a missing directory: %v %v", hosts, err)
	}
}
