package admin

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func writeToken(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadToken(t *testing.T) {
	if tok, err := LoadToken(""); err != nil || tok != "" {
		t.Fatalf("no file: %q %v, want API off", tok, err)
	}
	if _, err := LoadToken(writeToken(t, "")); err == nil {
		t.Fatal("empty file: want error")
	}
	if _, err := LoadToken(writeToken(t, "\n \n")); err == nil {
		t.Fatal("blank file: want error")
	}
	if tok, err := LoadToken(writeToken(t, "s3cret\n")); err != nil || tok != "s3cret" {
		t.Fatalf("trailing newline: %q %v", tok, err)
	}
	if _, err := LoadToken(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing file: want error")
	}
}

func TestAPIAuth(t *testing.T) {
	tokens, err := OpenTokens(writeToken(t, "s3cret\n"), writeToken(t, "l00k\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Listen("127.0.0.1:0", prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{}")) })
	if err := s.MountAPI(tokens, api); err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.Addr()
	for _, tc := range []struct {
		name, method, auth string
		want               int
	}{
		{"missing header", "GET", "", 401},
		{"wrong scheme", "GET", "Basic czNjcmV0", 401},
		{"wrong token", "GET", "Bearer s3cre", 401},
		{"token with newline kept", "GET", "Bearer s3cret\n", 401},
		{"correct token", "GET", "Bearer s3cret", 200},
		{"scheme case-insensitive", "GET", "bearer s3cret", 200},
		{"operator acts", "POST", "Bearer s3cret", 200},
		{"read-only reads", "GET", "Bearer l00k", 200},
		{"read-only HEAD", "HEAD", "Bearer l00k", 200},
		{"read-only cannot act", "POST", "Bearer l00k", 403},
		{"read-only cannot delete", "DELETE", "Bearer l00k", 403},
		{"no token cannot act", "POST", "", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+"/api/v1/status", nil)
			if tc.auth != "" {
				req.Header["Authorization"] = []string{tc.auth}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				// net/http refuses to send a header value with a newline:
				// that request never reaches the server at all.
				if tc.want == 401 {
					return
				}
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
	// The operator endpoints stay open.
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if code, _ := get(t, base+p); code != 200 {
			t.Fatalf("%s: %d without a token", p, code)
		}
	}
}

func TestAPIOffWithoutToken(t *testing.T) {
	s, err := Listen("127.0.0.1:0", prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	reached := false
	if err := s.MountAPI(Tokens{}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true })); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+s.Addr()+"/api/v1/status", nil)
	req.Header.Set("Authorization", "Bearer ")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || reached {
		t.Fatalf("API off: status %d, reached %v", resp.StatusCode, reached)
	}
}
