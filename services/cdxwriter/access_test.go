package cdxwriter

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/internal/testwait"
	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
)

// The start-up log says who may write to the CDX API, and warns when
// anyone who reaches a non-loopback listener may.
func TestAPIOptionsLog(t *testing.T) {
	tokens := admin.Tokens{Operator: admin.StaticToken("t")}
	for _, tc := range []struct {
		name   string
		addr   string
		open   bool
		tokens admin.Tokens
		want   string // the line logged, with its level
	}{
		{"read-only by default", ":8081", false, admin.Tokens{}, `level=INFO msg="CDX API is read-only: writes need a token (--admin-token-file) or --cdx-writes-open"`},
		{"token", ":8081", false, tokens, `level=INFO msg="CDX API writes (POST ingest, delete, checkpoint) need the admin token"`},
		{"open on all addresses", ":8081", true, admin.Tokens{}, `level=WARN msg="CDX API writes are open to anyone`},
		{"open on a public address", "192.0.2.7:8081", true, tokens, `level=WARN msg="CDX API writes are open to anyone`},
		{"open on IPv4 loopback", "127.0.0.1:8081", true, admin.Tokens{}, `level=INFO msg="CDX API writes are open on loopback`},
		{"open on IPv6 loopback", "[::1]:8081", true, admin.Tokens{}, `level=INFO msg="CDX API writes are open on loopback`},
		{"open on localhost", "localhost:8081", true, admin.Tokens{}, `level=INFO msg="CDX API writes are open on loopback`},
		{"no API", "", true, admin.Tokens{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, logs := testlog.New(slog.LevelInfo)
			opts := Config{CDXAddr: tc.addr, CDXWritesOpen: tc.open}.APIOptions(tc.tokens, log)
			if opts.OpenWrites != tc.open || opts.Tokens != tc.tokens {
				t.Fatalf("options %+v", opts)
			}
			out := logs.String()
			if tc.want == "" && out != "" || !strings.Contains(out, tc.want) || strings.Count(out, "\n") > 1 {
				t.Fatalf("logged %q, want one line with %q", out, tc.want)
			}
		})
	}
}

// The writer's own API (no index given: the writer opens it) refuses
// writes, naming the flag, unless CDXWritesOpen.
func TestWriterAPIWrites(t *testing.T) {
	const line = "- 20200101000000 http://w.example/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 10 0 f.warc.gz\n"
	for _, tc := range []struct {
		name string
		open bool
		want int
	}{
		{"closed by default", false, http.StatusForbidden},
		{"open", true, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 1)
			h.cfg.CDXWritesOpen = tc.open
			r := h.start(t)
			testwait.Until(t, 10*time.Second, "the CDX API to listen", func() bool { return r.w.APIAddr() != "" })
			resp, err := http.Post("http://"+r.w.APIAddr()+"/fc", "text/plain", strings.NewReader(line))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("POST: %d %q, want %d", resp.StatusCode, body, tc.want)
			}
			if tc.want == http.StatusForbidden && string(body) != cdxindex.WritesNeedToken {
				t.Fatalf("refusal %q does not name the flag", body)
			}
		})
	}
}

// Lines forwarded to an index that needs a token (another Trawler's)
// carry --forward-token-file's; a missing file fails New.
func TestForwardTokenFile(t *testing.T) {
	ext, err := cdxindex.Open(t.TempDir(), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ext.Close() })
	srv := httptest.NewServer(ext.Handler(cdxindex.HandlerOptions{Tokens: admin.Tokens{Operator: admin.StaticToken("fwd-tok")}}))
	t.Cleanup(srv.Close)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("fwd-tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	h := newHarness(t, 1)
	h.cfg.ForwardURL, h.cfg.ForwardTokenFile = srv.URL, filepath.Join(t.TempDir(), "missing")
	if _, err := New(h.cfg, Deps{Kafka: h.kc, Redis: h.rdb}); err == nil || !strings.Contains(err.Error(), "forward-token-file") {
		t.Fatalf("New with a missing token file: %v", err)
	}
	h.cfg.ForwardTokenFile = tokenFile
	h.produce(t, goldenEvents(t)...)
	h.start(t)
	h.waitCommitted(t, h.cfg.ForwardGroup())
	if n, _ := ext.Count("fc"); n == 0 {
		t.Fatal("nothing forwarded")
	}
}
