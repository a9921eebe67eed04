package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Bad input is a 400 with a reason, the wrong method a 405, and a missing
// part of the role a 503; a valid command reaches Send.
func TestHandlerInput(t *testing.T) {
	var sent []messages.Control
	h := Handler(Deps{Crawl: "fc", Send: func(_ context.Context, c messages.Control) (string, error) {
		sent = append(sent, c)
		return "id1", nil
	}})
	for _, tc := range []struct {
		method, path, body string
		want               int
		reason             string
	}{
		{"POST", "/api/v1/control", "not json", 400, "decode control"},
		{"POST", "/api/v1/control", `{"command":"seeds"}`, 400, "urls"},
		{"POST", "/api/v1/control", `{"command":"seeds","urls":["http://a/"],"host":"a"}`, 400, "host"},
		{"GET", "/api/v1/control/x1", "", 503, "acknowledgements"},
		{"GET", "/api/v1/control", "", 405, "POST"},
		{"POST", "/api/v1/status", "", 405, "GET"},
		{"GET", "/api/v1/status", "", 503, "no frontier"},
		{"GET", "/api/v1/explain?url=http://a/", "", 503, "not available"},
		{"GET", "/api/v1/other", "", 404, "no API endpoint"},
		{"POST", "/api/v1/control", `{"command":"seeds","urls":["http://a.example/"]}`, 202, `"id": "id1"`},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body)))
		if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.reason) {
			t.Errorf("%s %s %q: %d %s, want %d with %q", tc.method, tc.path, tc.body, rec.Code, rec.Body, tc.want, tc.reason)
		}
	}
	if len(sent) != 1 || sent[0].By != "admin-api" {
		t.Fatalf("sent %+v", sent)
	}
	_ = http.StatusOK
}
