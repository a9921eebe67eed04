package fetch

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Request.Limits replace the Config's limits for one fetch (a sheet's
// maxLengthBytes or timeouts); without them the Config's apply.
func TestPerRequestLimits(t *testing.T) {
	body := strings.Repeat("x", 5000)
	srv := startServer(t, respond("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n"+body))
	f := newFetcher(t, Config{AllowPrivate: true, MaxLengthBytes: 1000})
	url := "http://site.test:" + srv.port() + "/"
	tests := []struct {
		name    string
		limits  *Limits
		wantRaw int
		trunc   bool
	}{
		{"config limit", nil, 1000, true},
		{"sheet raises it", &Limits{MaxLengthBytes: 2000}, 2000, true},
		{"sheet lifts it", &Limits{MaxLengthBytes: 0}, len("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n") + 5000, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := f.Fetch(context.Background(), Request{URL: url, Limits: tc.limits})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := int(r.Raw.Size()); got != tc.wantRaw || (len(r.Annotations) > 0) != tc.trunc {
				t.Fatalf("raw %d bytes, annotations %v; want %d, truncated %v", got, r.Annotations, tc.wantRaw, tc.trunc)
			}
		})
	}
}

// A per-request total timeout shorter than the Config's cuts a slow body
// (timeTrunc) when it expires.
func TestPerRequestTotalTimeout(t *testing.T) {
	srv := startServer(t, func(s *session) {
		if _, err := s.readRequest(); err != nil {
			return
		}
		_ = s.write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"))
		s.waitClosed()
	})
	f := newFetcher(t, Config{AllowPrivate: true, TotalTimeout: time.Minute, ReadTimeout: time.Minute})
	start := time.Now()
	r, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/",
		Limits: &Limits{TotalTimeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Annotations) != 1 || r.Annotations[0] != AnnotationTimeTrunc {
		t.Fatalf("annotations %v, want timeTrunc", r.Annotations)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("took %v: the per-request timeout did not apply", took)
	}
}
