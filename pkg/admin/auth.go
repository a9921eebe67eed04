package admin

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// APIPrefix is where the admin JSON API lives on the admin listener.
const APIPrefix = "/api/v1/"

// LoadToken reads the admin API's bearer token from path (a Kubernetes
// Secret is mounted as a file). An empty path means no token: the API is
// off. Surrounding whitespace is dropped, since editors and `kubectl create
// secret --from-file` leave a trailing newline; a file with nothing else is
// an error rather than an API that accepts an empty token.
func LoadToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	tok, _, err := readToken(path)
	return tok, err
}

// readToken reads and checks the token in path, with the file's stat taken
// from the same open file, so the two always describe one version of it.
func readToken(path string) (string, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, fmt.Errorf("admin token file: %w", err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return "", nil, fmt.Errorf("admin token file: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", st, fmt.Errorf("admin token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", st, fmt.Errorf("admin token file %s is empty", path)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", st, fmt.Errorf("admin token file %s: the token must be one line without spaces", path)
	}
	return tok, st, nil
}

// Authorized reports whether r carries "Authorization: Bearer <token>".
// The comparison takes the same time whatever the guess, so the token
// cannot be learnt a byte at a time. An empty token authorizes nothing.
func Authorized(r *http.Request, token string) bool {
	if token == "" {
		return false
	}
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(cred)), []byte(token)) == 1
}

// Unauthorized answers 401 with the challenge RFC 6750 asks for.
func Unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="trawler"`)
	http.Error(w, "unauthorized: send Authorization: Bearer <admin token>", http.StatusUnauthorized)
}

// RequireToken wraps next so that only requests carrying the token reach
// it; every other request is answered 401.
func RequireToken(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Authorized(r, token) {
			Unauthorized(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// errNoHandler is returned by MountAPI for a nil handler.
var errNoHandler = errors.New("admin API: nil handler")

// errNoConsole is returned by MountConsole for a nil handler.
var errNoConsole = errors.New("admin console: nil handler")

// MountAPI serves api under APIPrefix behind the bearer tokens: the
// operator token may do anything, the read-only token only GET (see
// Tokens.Require). With neither the API stays off (every /api/v1/ request
// answers 404 saying so) and the log says it once at start; the tokens
// themselves are never logged. /metrics, /healthz and /readyz stay open
// either way.
func (s *Server) MountAPI(tokens Tokens, api http.Handler) error {
	if api == nil {
		return errNoHandler
	}
	if !tokens.Configured() {
		s.logger.Info("admin API off: no token configured (--admin-token-file)")
		s.mux.HandleFunc(APIPrefix, func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "admin API off: no token configured (--admin-token-file)", http.StatusNotFound)
		})
		return nil
	}
	s.logger.Info("admin API on, bearer token required", "path", APIPrefix,
		"operator_token", tokens.Operator != nil, "read_only_token", tokens.ReadOnly != nil)
	s.mux.Handle(APIPrefix, tokens.Require(api))
	return nil
}

// ConsolePrefix is where the operator console (pkg/console) lives on the
// admin listener; / redirects there.
const ConsolePrefix = "/console/"

// MountConsole serves the operator console under ConsolePrefix. The
// console keeps its own sessions, opened with the same tokens as the API
// (pkg/console); with no token configured it stays off, as the API does,
// and says so.
func (s *Server) MountConsole(tokens Tokens, console http.Handler) error {
	if console == nil {
		return errNoConsole
	}
	if !tokens.Configured() {
		s.mux.HandleFunc(ConsolePrefix, func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "console off: no admin token configured (--admin-token-file)", http.StatusNotFound)
		})
		return nil
	}
	s.logger.Info("operator console on", "path", ConsolePrefix)
	s.mux.Handle(ConsolePrefix, console)
	s.mux.Handle("GET /{$}", http.RedirectHandler(ConsolePrefix, http.StatusSeeOther))
	return nil
}
