package worker

import "testing"

// A dns: event is keyed like every other event of its host (ARCHITECTURE.md
// 3.1), so it lands on the host's partition; the vectors are the
// architecture's host-key vectors.
func TestEventKeyIsTheHostKey(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://www.example.com/page", "cf7cc746"},
		{"dns:www.example.com", "cf7cc746"},
		{"DNS:www.example.com", "cf7cc746"},
		{"https://www.colwynbaythi.co.uk/", "f0dd8424"},
		{"dns:acid.matkelly.com", "77256b24"},
		{"http://example.com:8080/x", "61642781"},
	} {
		if got := eventKey(tc.url); got != tc.want {
			t.Errorf("eventKey(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
