package admin

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
)

// Token is a bearer token, fixed or read from a file. A file is read again
// when it changes (another inode, size or modification time, checked with
// one stat per use), so a rotated Kubernetes Secret or an edited file takes
// effect without a restart. A file that becomes unreadable, empty or
// malformed keeps the last good token in force, with a warning: a rewrite
// caught half-way must not lock operators out. A nil *Token is no token
// and authorizes nothing.
type Token struct {
	path string
	log  *slog.Logger

	mu      sync.Mutex
	seen    os.FileInfo // the file as last read, or as last found bad
	value   string
	missing bool // the last stat failed: warned once until it succeeds
}

// StaticToken is a token that never changes (tests, a token generated in
// process). An empty string is no token: nil.
func StaticToken(value string) *Token {
	if value == "" {
		return nil
	}
	return &Token{value: value}
}

// OpenTokenFile reads the token in path (see LoadToken for the format) and
// keeps watching the file. An empty path is no token: nil, nil. log
// receives reloads and bad rewrites, never the token; nil discards.
func OpenTokenFile(path string, log *slog.Logger) (*Token, error) {
	if path == "" {
		return nil, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v, st, err := readToken(path)
	if err != nil {
		return nil, err
	}
	return &Token{path: path, log: log, seen: st, value: v}, nil
}

// Path is the file the token is read from; "" for a static token.
func (t *Token) Path() string {
	if t == nil {
		return ""
	}
	return t.path
}

// Value is the token in force; "" for a nil Token.
func (t *Token) Value() string {
	if t == nil {
		return ""
	}
	if t.path == "" {
		return t.value
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st, err := os.Stat(t.path)
	if err != nil {
		if !t.missing {
			t.missing = true
			t.log.Warn("admin token file unreadable; the last token read stays in force", "path", t.path, "err", err)
		}
		return t.value
	}
	t.missing = false
	if unchanged(t.seen, st) {
		return t.value
	}
	v, read, err := readToken(t.path)
	// Recorded even when bad, so a bad file is warned about once, not on
	// every request until it is fixed; the stat of the file read, so a
	// change between the two stats is seen at the next request.
	t.seen = st
	if read != nil {
		t.seen = read
	}
	if err != nil {
		t.log.Warn("admin token file changed but holds no usable token; the last token read stays in force", "path", t.path, "err", err)
		return t.value
	}
	if v != t.value {
		t.value = v
		t.log.Info("admin token file reloaded", "path", t.path)
	}
	return t.value
}

// unchanged reports whether the file found is the one read: the same inode
// (a Secret update swaps a symlink to a new file), size and time.
func unchanged(seen, st os.FileInfo) bool {
	return seen != nil && os.SameFile(seen, st) && seen.Size() == st.Size() && seen.ModTime().Equal(st.ModTime())
}

// matches compares cred with the token in constant time.
func (t *Token) matches(cred string) bool {
	v := t.Value()
	return v != "" && subtle.ConstantTimeCompare([]byte(cred), []byte(v)) == 1
}

// Access is what a request's bearer token allows.
type Access int

// The levels of Access, each allowing what the one before does.
const (
	// NoAccess: no token, or a wrong one.
	NoAccess Access = iota
	// ReadAccess: the read-only token; GET and HEAD.
	ReadAccess
	// OperatorAccess: the operator token; everything.
	OperatorAccess
)

// Tokens are an API's bearer tokens: the operator's, which may do
// anything, and a read-only one (for a console's viewers), which may only
// read. Either may be nil.
type Tokens struct {
	Operator *Token
	ReadOnly *Token
}

// OpenTokens opens the operator and read-only token files (either path may
// be empty) and checks that they differ: a read-only token equal to the
// operator's would grant everything.
func OpenTokens(operatorPath, readOnlyPath string, log *slog.Logger) (Tokens, error) {
	op, err := OpenTokenFile(operatorPath, log)
	if err != nil {
		return Tokens{}, err
	}
	ro, err := OpenTokenFile(readOnlyPath, log)
	if err != nil {
		return Tokens{}, fmt.Errorf("read-only %w", err)
	}
	if op != nil && ro != nil && op.Value() == ro.Value() {
		return Tokens{}, fmt.Errorf("the read-only token (%s) is the operator token (%s): give it its own", readOnlyPath, operatorPath)
	}
	return Tokens{Operator: op, ReadOnly: ro}, nil
}

// Configured reports whether any token is set.
func (ts Tokens) Configured() bool { return ts.Operator != nil || ts.ReadOnly != nil }

// Access is what r's "Authorization: Bearer <token>" allows. Both tokens
// are compared, each in constant time, so the answer's timing says
// nothing about either.
func (ts Tokens) Access(r *http.Request) Access {
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return NoAccess
	}
	return ts.Check(cred)
}

// Check is what the token cred allows (the console's login form sends it
// in a body, not a header). Both tokens are compared, each in constant
// time, so the answer's timing says nothing about either.
func (ts Tokens) Check(cred string) Access {
	cred = strings.TrimSpace(cred)
	op, ro := ts.Operator.matches(cred), ts.ReadOnly.matches(cred)
	switch {
	case op:
		return OperatorAccess
	case ro:
		return ReadAccess
	}
	return NoAccess
}

// reads reports whether r only reads.
func reads(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }

// Require wraps next so that a request without a valid token is answered
// 401, and one with the read-only token that would act (any method but GET
// and HEAD) 403.
func (ts Tokens) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch ts.Access(r) {
		case NoAccess:
			Unauthorized(w)
		case ReadAccess:
			if !reads(r) {
				ReadOnlyRefused(w)
				return
			}
			next.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// ReadOnlyRefused answers 403 to a read-only token asking to act.
func ReadOnlyRefused(w http.ResponseWriter) {
	http.Error(w, "forbidden: the read-only token can only read (GET); acting needs the operator token (--admin-token-file)", http.StatusForbidden)
}
