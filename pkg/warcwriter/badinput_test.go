package warcwriter

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBadCaptures(t *testing.T) {
	good := func() testFetch {
		return newFetch("http://example.com/bad", fetchDate, []byte("payload"), false)
	}
	tests := []struct {
		name    string
		mutate  func(*Capture)
		wantMsg string // part of the error
		input   bool   // want ErrInvalidInput
	}{
		{"empty URL", func(c *Capture) { c.URL = "" }, "URL: is empty", true},
		{"URL with line break", func(c *Capture) { c.URL = "http://example.com/\r\nX: y" }, "URL: contains", true},
		{"nil response", func(c *Capture) { c.Response = nil }, "Response: is nil", true},
		{"negative length", func(c *Capture) { c.ResponseLength = -1 }, "ResponseLength: -1 is not positive", true},
		{"zero length", func(c *Capture) { c.ResponseLength = 0 }, "ResponseLength: 0", true},
		{"short response", func(c *Capture) { c.ResponseLength += 10 }, "ResponseLength says", true},
		{"zero date", func(c *Capture) { c.Date = time.Time{} }, "Date: is zero", true},
		{"bad IP", func(c *Capture) { c.IP = "999.1.1.1" }, "IP: \"999.1.1.1\"", true},
		{"IP with zone", func(c *Capture) { c.IP = "fe80::1%eth0" }, "IP:", true},
		{"empty request", func(c *Capture) { c.Request = nil }, "Request: is empty", true},
		{"no payload digest", func(c *Capture) { c.PayloadDigest = "" }, "PayloadDigest", true},
		{"payload digest without algorithm", func(c *Capture) { c.PayloadDigest = "ABCDEF" }, "PayloadDigest", true},
		{"wrong block digest", func(c *Capture) { c.BlockDigest = sha1Digest([]byte("other")) }, "wrong digest", true},
		{"block digest unknown algorithm", func(c *Capture) { c.BlockDigest = "crc9:AAAA" }, "unsupported digest algorithm", false},
		{"response too short for http", func(c *Capture) {
			c.Response, c.ResponseLength = strings.NewReader("HT"), 2
		}, "not an HTTP response", true},
		{"response not http", func(c *Capture) {
			c.Response, c.ResponseLength = strings.NewReader("<html>hello</html>"), 18
		}, `not an HTTP response: starts "<html"`, true},
		{"revisit without date", func(c *Capture) { c.Revisit = &Revisit{RefersToURI: c.URL} }, "Revisit.RefersToDate: is zero", true},
		{"revisit without uri", func(c *Capture) { c.Revisit = &Revisit{RefersToDate: fetchDate} }, "Revisit.RefersToURI", true},
		{"revisit with bad record id", func(c *Capture) {
			c.Revisit = &Revisit{RefersToURI: c.URL, RefersToDate: fetchDate, RefersToRecordID: "<a<b>"}
		}, "Revisit.RefersToRecordID", true},
		{"failing reader", func(c *Capture) { c.Response = errReader{} }, "read response of http://example.com/bad: disk gone", false},
	}
	dir := t.TempDir()
	w, _ := newTestWriter(t, testConfig(dir))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := good()
			tc.mutate(&f.c)
			_, err := w.WriteCapture(context.Background(), f.c)
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantMsg)
			}
			if errors.Is(err, ErrInvalidInput) != tc.input {
				t.Errorf("errors.Is(err, ErrInvalidInput) = %v, want %v", !tc.input, tc.input)
			}
		})
	}
	if names := warcFiles(t, dir); len(names) != 0 {
		t.Fatalf("bad captures created files %v", names)
	}

	// With a file open, bad captures leave it as it is.
	ok := good()
	if _, err := w.WriteCapture(context.Background(), ok.c); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, warcFiles(t, dir)[0])
	before := fileBytes(t, open)
	for _, tc := range tests {
		f := good()
		tc.mutate(&f.c)
		if _, err := w.WriteCapture(context.Background(), f.c); err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
	}
	if after := fileBytes(t, open); !bytes.Equal(before, after) {
		t.Fatalf("bad captures changed the open file from %d to %d bytes", len(before), len(after))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, strings.TrimSuffix(open, openSuffix), strictOptions()...)
	if len(recs) != 3 {
		t.Errorf("file has %d records, want warcinfo + the good capture", len(recs))
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBadDNS(t *testing.T) {
	tests := []struct {
		name, host, ip string
		date           time.Time
		answer         []byte
		wantMsg        string
	}{
		{"empty host", "", "", fetchDate, []byte("a"), "host: \"\""},
		{"host with slash", "a/b", "", fetchDate, []byte("a"), "host: \"a/b\""},
		{"host with space", "a b", "", fetchDate, []byte("a"), "host:"},
		{"zero date", "example.com", "", time.Time{}, []byte("a"), "date: is zero"},
		{"bad ip", "example.com", "x", fetchDate, []byte("a"), "ip: \"x\""},
		{"empty answer", "example.com", "", fetchDate, nil, "answer: is empty"},
	}
	dir := t.TempDir()
	w, _ := newTestWriter(t, testConfig(dir))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.WriteDNS(context.Background(), tc.host, tc.date, tc.ip, tc.answer)
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("err = %v, want ErrInvalidInput containing %q", err, tc.wantMsg)
			}
		})
	}
	if names := warcFiles(t, dir); len(names) != 0 {
		t.Fatalf("bad dns records created files %v", names)
	}
}

func TestBadConfig(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantMsg string
	}{
		{"no dir", func(c *Config) { c.Dir = "" }, "Dir is empty"},
		{"no prefix", func(c *Config) { c.Prefix = "" }, "Prefix is empty"},
		{"prefix with slash", func(c *Config) { c.Prefix = "../x" }, "Prefix \"../x\""},
		{"hostname with space", func(c *Config) { c.Hostname = "a b" }, "Hostname \"a b\""},
		{"negative size", func(c *Config) { c.MaxFileSize = -1 }, "MaxFileSize -1"},
		{"compression 10", func(c *Config) { c.CompressionLevel = 10 }, "CompressionLevel 10"},
		{"negative parallel", func(c *Config) { c.Parallel = -2 }, "Parallel -2"},
		{"operator with newline", func(c *Config) { c.Operator = "a\nb" }, "Operator contains a line break"},
		{"unknown version", func(c *Config) { c.Version = "1.2" }, `Version "1.2" is not "1.0" or "1.1"`},
		{"version with prefix", func(c *Config) { c.Version = "WARC/1.0" }, `Version "WARC/1.0"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t.TempDir())
			tc.mutate(&cfg)
			w, err := New(cfg)
			if err == nil {
				_ = w.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantMsg)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Config{Dir: "d", Prefix: "P"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if cfg.MaxFileSize != 1<<30 || cfg.Parallel != 1 || cfg.Software != DefaultSoftware || cfg.Hostname != host ||
		cfg.Version != Version10 {
		t.Errorf("defaults = %+v", cfg)
	}
}

func TestFileName(t *testing.T) {
	at := time.Date(2025, 12, 31, 23, 59, 58, 7_900_000, time.FixedZone("X", 3600))
	got := fileName("BL-NPLD-VIRAL", at, 42, "worker-1.example")
	want := "BL-NPLD-VIRAL-20251231225958007-00042-worker-1.example.warc.gz"
	if got != want {
		t.Errorf("fileName = %q, want %q", got, want)
	}
	if o := openedFromName(got); !o.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("openedFromName = %v, want %v", o, at.Truncate(time.Millisecond))
	}
	if o := openedFromName("other.warc.gz"); !o.IsZero() {
		t.Errorf("openedFromName(other) = %v, want zero", o)
	}
}
