package cdxindex

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openTest opens an index in a fresh directory, closed at cleanup.
func openTest(t testing.TB) *Index {
	t.Helper()
	ix, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

// response is what a request through the handler returned.
type response struct {
	status int
	header http.Header
	body   string
}

func do(t testing.TB, h http.Handler, method, target, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, rd))
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
}

// mustPost ingests body into collection and fails the test unless it is
// accepted.
func mustPost(t testing.TB, h http.Handler, collection, body string) {
	t.Helper()
	if r := do(t, h, http.MethodPost, "/"+collection, body); r.status != http.StatusOK {
		t.Fatalf("POST /%s: %d %s", collection, r.status, r.body)
	}
}

// mustGet queries and fails the test unless the answer is 200.
func mustGet(t testing.TB, h http.Handler, target string) string {
	t.Helper()
	r := do(t, h, http.MethodGet, target, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, r.status, r.body)
	}
	return r.body
}
