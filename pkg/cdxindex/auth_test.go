package cdxindex

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/admin"
)

// send makes one request to srv; auth "" sends no Authorization header.
func send(t *testing.T, srv *httptest.Server, method, path, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// writeEndpoints are the API's writes, each with a body it accepts and
// the start of its success answer; run in order, each succeeds (the delete
// finds the line the ingest added).
var writeEndpoints = []struct {
	name, path, body, ok string
}{
	{"ingest", "/c", goodLine + "\n", "Added 1 records\n"},
	{"delete", "/c/delete", goodLine + "\n", "Deleted 1 records\n"},
	{"checkpoint", "/api/checkpoint", "", ""},
}

// Every write endpoint, under each way writes can be configured: refused
// without a token (403 naming the flag), 401 with a wrong or missing
// token, 403 with the read-only token, accepted with the operator token or
// with open writes; reads stay open throughout.
func TestHandlerWriteAccess(t *testing.T) {
	tokens := admin.Tokens{Operator: admin.StaticToken("s3cret"), ReadOnly: admin.StaticToken("look")}
	for _, tc := range []struct {
		name string
		opts HandlerOptions
		auth string
		// want is the status of every write; wantBody the start of each
		// refusal's body.
		want     int
		wantBody string
	}{
		{"no token configured", HandlerOptions{}, "", 403, WritesNeedToken},
		{"no token configured, one sent", HandlerOptions{}, "Bearer s3cret", 403, WritesNeedToken},
		{"only a read-only token configured", HandlerOptions{Tokens: admin.Tokens{ReadOnly: tokens.ReadOnly}}, "Bearer look", 403, WritesNeedToken},
		{"token missing", HandlerOptions{Tokens: tokens}, "", 401, "unauthorized"},
		{"wrong token", HandlerOptions{Tokens: tokens}, "Bearer wrong", 401, "unauthorized"},
		{"wrong scheme", HandlerOptions{Tokens: tokens}, "Basic czNjcmV0", 401, "unauthorized"},
		{"read-only token", HandlerOptions{Tokens: tokens}, "Bearer look", 403, "CDX API writes need the operator token"},
		{"operator token", HandlerOptions{Tokens: tokens}, "Bearer s3cret", 200, ""},
		{"open writes", HandlerOptions{OpenWrites: true}, "", 200, ""},
		{"open writes ignore tokens", HandlerOptions{OpenWrites: true, Tokens: tokens}, "Bearer wrong", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t)
			srv := httptest.NewServer(ix.Handler(tc.opts))
			t.Cleanup(srv.Close)
			for _, ep := range writeEndpoints {
				code, body := send(t, srv, http.MethodPost, ep.path, tc.auth, ep.body)
				if code != tc.want {
					t.Fatalf("%s: %d %q, want %d", ep.name, code, body, tc.want)
				}
				if tc.want != 200 && !strings.HasPrefix(body, tc.wantBody) {
					t.Fatalf("%s: body %q, want it to start %q", ep.name, body, tc.wantBody)
				}
				if tc.want == 200 && !strings.HasPrefix(body, ep.ok) {
					t.Fatalf("%s: body %q, want %q", ep.name, body, ep.ok)
				}
				if tc.want != 200 {
					if _, ok := ix.Count("c"); ok {
						t.Fatalf("refused %s wrote to the index", ep.name)
					}
				}
			}
			if code, _ := send(t, srv, http.MethodGet, "/api/collections", "", ""); code != 200 {
				t.Fatalf("collections without a token: %d", code)
			}
		})
	}
}

// A token file rewritten while the API serves takes effect at the next
// request: the old token is refused, the new one accepted.
func TestHandlerWriteTokenReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := admin.OpenTokenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(openTest(t).Handler(HandlerOptions{Tokens: admin.Tokens{Operator: tok}}))
	t.Cleanup(srv.Close)
	if code, body := send(t, srv, http.MethodPost, "/c", "Bearer first", goodLine+"\n"); code != 200 {
		t.Fatalf("first token: %d %q", code, body)
	}
	if err := os.WriteFile(path, []byte("second-and-longer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _ := send(t, srv, http.MethodPost, "/c", "Bearer first", goodLine+"\n"); code != 401 {
		t.Fatalf("old token after the rewrite: %d, want 401", code)
	}
	if code, body := send(t, srv, http.MethodPost, "/c", "Bearer second-and-longer", goodLine+"\n"); code != 200 {
		t.Fatalf("new token: %d %q", code, body)
	}
}
