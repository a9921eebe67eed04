package admin

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// The console is mounted under ConsolePrefix with / redirecting there;
// without a token it stays off and says why; a nil handler is an error.
func TestMountConsole(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tokens Tokens
		want   int
		says   string
	}{
		{"on", Tokens{Operator: StaticToken("op")}, http.StatusTeapot, "console here"},
		{"off without a token", Tokens{}, http.StatusNotFound, "console off: no admin token"},
	} {
		s, err := Listen("127.0.0.1:0", prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if err := s.MountConsole(tt.tokens, nil); err == nil {
			t.Fatal("nil console mounted")
		}
		err = s.MountConsole(tt.tokens, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "console here", http.StatusTeapot)
		}))
		if err != nil {
			t.Fatal(err)
		}
		base := "http://" + s.Addr()
		if code, body := get(t, base+ConsolePrefix+"x"); code != tt.want || !strings.Contains(body, tt.says) {
			t.Errorf("%s: %d %q", tt.name, code, body)
		}
		if code, _ := get(t, base+"/healthz"); code != 200 {
			t.Errorf("%s: healthz %d", tt.name, code)
		}
	}
	s, err := Listen("127.0.0.1:0", prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	_ = s.MountConsole(Tokens{ReadOnly: StaticToken("ro")}, http.NotFoundHandler())
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cl.Get("http://" + s.Addr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != ConsolePrefix {
		t.Fatalf("/: %d %q, want a redirect to the console", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// Check (the console's login) answers as Access does for a header, the
// surrounding white space dropped, and nothing for an empty or wrong token.
func TestTokensCheck(t *testing.T) {
	ts := Tokens{Operator: StaticToken("op"), ReadOnly: StaticToken("ro")}
	for cred, want := range map[string]Access{"op": OperatorAccess, " ro\n": ReadAccess, "": NoAccess, "opx": NoAccess, "o": NoAccess} {
		if got := ts.Check(cred); got != want {
			t.Errorf("Check(%q) = %v, want %v", cred, got, want)
		}
	}
	if got := (Tokens{}).Check(""); got != NoAccess {
		t.Errorf("no tokens: Check(\"\") = %v", got)
	}
}
