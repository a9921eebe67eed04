package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"

	"github.com/trawler-crawl/trawler/pkg/admin"
)

// cookieName is the session cookie; loginCookie carries the login form's
// CSRF token before there is a session.
const (
	cookieName  = "trawler_console"
	loginCookie = "trawler_console_login"
)

// session is one login.
type session struct {
	// csrf is the token every POST of the session must carry.
	csrf    string
	access  admin.Access
	expires time.Time
}

// actor names who acts in control messages and logs: the token used,
// never its value.
func (s *session) actor() string {
	if s.access == admin.OperatorAccess {
		return "console:operator"
	}
	return "console:read-only"
}

// canAct reports whether the session may send commands.
func (s *session) canAct() bool { return s.access == admin.OperatorAccess }

// maxSessions bounds the logins kept: past it a login ends the one
// closest to expiry, so a flood of logins cannot grow memory.
const maxSessions = 1000

// sessions are the logins, kept in memory: a restart logs everyone out,
// which a console of one crawl process can afford. Ids are looked up by
// their SHA-256, so a lookup's timing says nothing about a valid id.
type sessions struct {
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
	byID map[[32]byte]*session
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{ttl: ttl, now: now, byID: map[[32]byte]*session{}}
}

// randomToken is 32 random bytes, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// open starts a session and returns its id.
func (ss *sessions) open(a admin.Access) (string, *session) {
	id := randomToken()
	s := &session{csrf: randomToken(), access: a, expires: ss.now().Add(ss.ttl)}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.prune()
	if len(ss.byID) >= maxSessions {
		ss.dropSoonest()
	}
	ss.byID[sha256.Sum256([]byte(id))] = s
	return id, s
}

// get returns the live session with id, or nil.
func (ss *sessions) get(id string) *session {
	if id == "" {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	k := sha256.Sum256([]byte(id))
	s := ss.byID[k]
	if s != nil && !ss.now().Before(s.expires) {
		delete(ss.byID, k)
		return nil
	}
	return s
}

// close ends the session with id.
func (ss *sessions) close(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.byID, sha256.Sum256([]byte(id)))
}

// prune drops expired sessions; the caller holds mu. Logins are rare, so
// a sweep at each keeps the map small without a goroutine.
func (ss *sessions) prune() {
	now := ss.now()
	for k, s := range ss.byID {
		if !now.Before(s.expires) {
			delete(ss.byID, k)
		}
	}
}

// dropSoonest ends the session closest to expiry; the caller holds mu.
func (ss *sessions) dropSoonest() {
	var key [32]byte
	var soonest *session
	for k, s := range ss.byID {
		if soonest == nil || s.expires.Before(soonest.expires) {
			key, soonest = k, s
		}
	}
	delete(ss.byID, key)
}

// sameToken compares two tokens in constant time; empty never matches.
func sameToken(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
