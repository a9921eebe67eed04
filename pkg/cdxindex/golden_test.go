package cdxindex

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestGoldenOutbackCDX checks queries byte for byte against outputs from
// OutbackCDX's own test suite (see testdata/outbackcdx/README.md).
func TestGoldenOutbackCDX(t *testing.T) {
	ix := openTest(t)
	h := ix.Handler(HandlerOptions{OpenWrites: true})
	in, err := os.ReadFile("testdata/outbackcdx/ingest.cdx")
	if err != nil {
		t.Fatal(err)
	}
	if r := do(t, h, http.MethodPost, "/golden", string(in)); r.status != 200 || r.body != "Added 7 records\n" {
		t.Fatalf("ingest: %d %q", r.status, r.body)
	}
	tests := []struct {
		query, golden, contentType string
	}{
		{"url=http://example.org/", "example-org.cdx", "text/plain"},
		{"url=http://example.org/&output=json", "example-org.json", "application/json"},
		{"url=http://example.org/&output=jsondict", "example-org.jsondict", "application/json"},
		{"url=http://example.org/&output=cdxj", "example-org.cdxj", "text/x-cdxj"},
		{"url=example.org", "example-org.cdx", "text/plain"},
		{"url=http://example.net/", "digest-scheme.cdx", "text/plain"},
		{"url=https://example.org/robots.txt", "robots-cdxj-input.cdx", "text/plain"},
		{"url=nla.gov.au", "nla.cdx", "text/plain"},
		{"urlkey=au,gov,nla)/", "nla.cdx", "text/plain"},
		{"url=https%3A%2F%2Fwww.facebook.com%2Fpages_reaction_units%2Fmore%2F%3Fpage_id%3D115681848447769", "facebook.cdx", "text/plain"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata/outbackcdx", tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			r := do(t, h, http.MethodGet, "/golden?"+tc.query, "")
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if r.body != string(want) {
				t.Errorf("body\n%q\nwant (%s)\n%q", r.body, tc.golden, want)
			}
			if got := r.header.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type %q, want %q", got, tc.contentType)
			}
			if got := r.header.Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("Access-Control-Allow-Origin %q", got)
			}
			if r.header.Get("outbackcdx-urlkey") == "" {
				t.Error("no outbackcdx-urlkey header")
			}
		})
	}
}
