package cdxindex

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// With a write token, ingest and delete need it; queries stay open.
func TestHandlerWriteToken(t *testing.T) {
	ix := openTest(t)
	srv := httptest.NewServer(ix.Handler(HandlerOptions{WriteToken: "s3cret"}))
	t.Cleanup(srv.Close)
	send := func(method, path, auth, body string) (int, string) {
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
	for _, auth := range []string{"", "Bearer wrong", "Basic czNjcmV0"} {
		if code, _ := send(http.MethodPost, "/c", auth, goodLine+"\n"); code != 401 {
			t.Fatalf("ingest with %q: %d, want 401", auth, code)
		}
		if code, _ := send(http.MethodPost, "/c/delete", auth, goodLine+"\n"); code != 401 {
			t.Fatalf("delete with %q: %d, want 401", auth, code)
		}
	}
	if n, ok := ix.Count("c"); ok || n != 0 {
		t.Fatalf("refused POST wrote %d entries", n)
	}
	if code, body := send(http.MethodPost, "/c", "Bearer s3cret", goodLine+"\n"); code != 200 || body != "Added 1 records\n" {
		t.Fatalf("ingest with token: %d %q", code, body)
	}
	if code, body := send(http.MethodGet, "/c?url=http://good.org/&fl=offset", "", ""); code != 200 || body != "0\n" {
		t.Fatalf("query without token: %d %q", code, body)
	}
	if code, _ := send(http.MethodGet, "/api/collections", "", ""); code != 200 {
		t.Fatalf("collections without token: %d", code)
	}
	if code, body := send(http.MethodPost, "/c/delete", "Bearer s3cret", goodLine+"\n"); code != 200 || body != "Deleted 1 records\n" {
		t.Fatalf("delete with token: %d %q", code, body)
	}
}
