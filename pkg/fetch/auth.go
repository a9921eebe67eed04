package fetch

import (
	"crypto/md5" //nolint:gosec // RFC 7616 MD5 digest, required by servers
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net"
	"slices"
	"strings"
)

// Credential is a login for HTTP Basic or Digest authentication, offered
// when a server answers 401 with a matching challenge.
type Credential struct {
	// Domain is the host the credential is for, with ":port" when the URL
	// has a non-default port (as in the Host header), e.g. "example.com".
	Domain string `yaml:"domain"`
	// Realm must equal the challenge's realm; "" matches any realm.
	Realm    string `yaml:"realm"`
	Login    string `yaml:"login"`
	Password string `yaml:"password"`
}

// String describes the credential without its password, so printing a
// Config never reveals one.
func (c Credential) String() string {
	return fmt.Sprintf("{domain %q realm %q login %q password ***}", c.Domain, c.Realm, c.Login)
}

// GoString keeps %#v from printing the password too.
func (c Credential) GoString() string { return "fetch.Credential" + c.String() }

// validate reports a credential that can never be sent. Errors never
// mention the password.
func (c Credential) validate() error {
	switch {
	case c.Domain == "":
		return errors.New("domain is empty")
	case strings.ContainsAny(c.Domain, " \t/@"):
		return fmt.Errorf("domain %q must be host or host:port", c.Domain)
	case c.Login == "":
		return fmt.Errorf("domain %q: login is empty", c.Domain)
	case strings.ContainsRune(c.Login, ':'):
		return fmt.Errorf("domain %q: login %q contains ':' (RFC 7617)", c.Domain, c.Login)
	case hasControl(c.Login) || hasControl(c.Realm):
		return fmt.Errorf("domain %q: login or realm contains control characters", c.Domain)
	}
	return nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f })
}

// matches reports whether c applies to target t and the challenge realm.
func (c Credential) matches(t target, realm string) bool {
	if c.Realm != "" && c.Realm != realm {
		return false
	}
	return strings.EqualFold(c.Domain, t.hostHeader) ||
		strings.EqualFold(c.Domain, net.JoinHostPort(t.host, t.port))
}

// answerChallenge picks the strongest challenge among the 401's
// WWW-Authenticate values that a configured credential matches, and
// returns the Authorization value answering it. Unparseable values and
// unsupported challenges are passed over.
func (f *Fetcher) answerChallenge(values []string, p fetchPlan) (string, bool) {
	if len(f.cfg.Credentials) == 0 {
		return "", false
	}
	best, bestRank := "", 0
	for _, v := range values {
		chs, err := parseChallenges(v)
		if err != nil {
			continue
		}
		for _, ch := range chs {
			rank := challengeRank(ch)
			if rank <= bestRank {
				continue
			}
			i := slices.IndexFunc(f.cfg.Credentials, func(c Credential) bool { return c.matches(p.target, ch.params["realm"]) })
			if i < 0 {
				continue
			}
			authz, err := authorize(ch, f.cfg.Credentials[i], p.method, f.requestTarget(p.target))
			if err != nil {
				continue
			}
			best, bestRank = authz, rank
		}
	}
	return best, bestRank > 0
}

// challengeRank orders the schemes we can answer, strongest highest; 0
// means unsupported.
func challengeRank(ch challenge) int {
	switch ch.scheme {
	case "basic":
		return 1
	case "digest":
		if _, _, ok := digestHash(ch.params["algorithm"]); ok {
			if strings.HasPrefix(strings.ToUpper(ch.params["algorithm"]), "SHA") {
				return 3
			}
			return 2
		}
	}
	return 0
}

// authorize builds the Authorization value for ch with c.
func authorize(ch challenge, c Credential, method, uri string) (string, error) {
	if ch.scheme == "basic" {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(c.Login+":"+c.Password)), nil
	}
	cnonce := make([]byte, 16)
	if _, err := rand.Read(cnonce); err != nil {
		return "", fmt.Errorf("digest cnonce: %w", err)
	}
	return digestAuthorization(ch, c, method, uri, hex.EncodeToString(cnonce))
}

// digestHash returns the hash for a Digest algorithm name (RFC 7616
// section 3.3; absent means MD5) and whether it is a -sess variant.
func digestHash(alg string) (func() hash.Hash, bool, bool) {
	a := strings.ToUpper(alg)
	sess := strings.HasSuffix(a, "-SESS")
	switch strings.TrimSuffix(a, "-SESS") {
	case "", "MD5":
		return md5.New, sess, true
	case "SHA-256":
		return sha256.New, sess, true
	case "SHA-512-256":
		return sha512.New512_256, sess, true
	}
	return nil, false, false
}

// digestAuthorization computes a Digest response (RFC 7616 section 3.4)
// with nonce count 1, as each challenge is answered once.
func digestAuthorization(ch challenge, c Credential, method, uri, cnonce string) (string, error) {
	newHash, sess, ok := digestHash(ch.params["algorithm"])
	if !ok {
		return "", fmt.Errorf("digest algorithm %q not supported", ch.params["algorithm"])
	}
	nonce, realm := ch.params["nonce"], ch.params["realm"]
	if nonce == "" {
		return "", errors.New("digest challenge has no nonce")
	}
	qop := ""
	if q, present := ch.params["qop"]; present {
		if !slices.ContainsFunc(strings.Split(q, ","), func(s string) bool { return strings.TrimSpace(s) == "auth" }) {
			return "", fmt.Errorf("digest qop %q not supported (only auth)", q)
		}
		qop = "auth"
	}
	h := func(parts ...string) string {
		x := newHash()
		x.Write([]byte(strings.Join(parts, ":")))
		return hex.EncodeToString(x.Sum(nil))
	}
	const nc = "00000001"
	ha1 := h(c.Login, realm, c.Password)
	if sess {
		ha1 = h(ha1, nonce, cnonce)
	}
	ha2 := h(method, uri)
	response := h(ha1, nonce, ha2) // RFC 2069 form, when no qop is offered
	if qop != "" {
		response = h(ha1, nonce, nc, cnonce, qop, ha2)
	}
	user := c.Login
	userhash := strings.EqualFold(ch.params["userhash"], "true")
	if userhash {
		user = h(c.Login, realm)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Digest username=%s, realm=%s, nonce=%s, uri=%s, response=%s",
		quote(user), quote(realm), quote(nonce), quote(uri), quote(response))
	if alg := ch.params["algorithm"]; alg != "" {
		fmt.Fprintf(&b, ", algorithm=%s", alg)
	}
	if op, present := ch.params["opaque"]; present {
		fmt.Fprintf(&b, ", opaque=%s", quote(op))
	}
	if qop != "" {
		fmt.Fprintf(&b, ", qop=%s, nc=%s, cnonce=%s", qop, nc, quote(cnonce))
	}
	if userhash {
		b.WriteString(", userhash=true")
	}
	return b.String(), nil
}

// quote renders s as an HTTP quoted-string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// requestTarget is the request-target as sent on the request line, which
// is also what Digest's uri covers.
func (f *Fetcher) requestTarget(t target) string {
	if f.proxy != nil && f.proxy.kind == proxyHTTP && t.scheme == "http" {
		return t.absolute()
	}
	return t.requestURI
}
