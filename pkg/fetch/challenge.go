package fetch

import (
	"fmt"
	"strings"
)

// challenge is one auth challenge from a WWW-Authenticate header
// (RFC 9110 section 11.3): a scheme with either parameters or a token68.
type challenge struct {
	scheme  string            // lower-case
	params  map[string]string // lower-case names, unquoted values
	token68 string
}

// parseChallenges parses one WWW-Authenticate field value, which may hold
// several comma-separated challenges whose parameters are themselves
// comma-separated. Errors name the byte offset and what was wrong.
func parseChallenges(h string) ([]challenge, error) {
	l := &authLexer{s: h}
	var out []challenge
	afterScheme := false
	for {
		sawComma := l.skipSeparators()
		if l.eof() {
			return out, nil
		}
		if sawComma {
			afterScheme = false
		}
		if len(out) > 0 {
			cur := &out[len(out)-1]
			name, value, ok, err := l.param()
			if err != nil {
				return nil, err
			}
			if ok {
				if cur.token68 != "" {
					return nil, l.errorf("parameter %q after the token68 of %s", name, cur.scheme)
				}
				cur.params[strings.ToLower(name)] = value
				if err := l.endItem(); err != nil {
					return nil, err
				}
				afterScheme = false
				continue
			}
			if afterScheme {
				if t, ok := l.token68(); ok {
					cur.token68 = t
					if err := l.endItem(); err != nil {
						return nil, err
					}
					afterScheme = false
					continue
				}
			}
		}
		scheme := l.token()
		if scheme == "" {
			return nil, l.errorf("expected an auth scheme, found %q", l.s[l.i])
		}
		out = append(out, challenge{scheme: strings.ToLower(scheme), params: map[string]string{}})
		if !l.eof() && l.s[l.i] != ' ' && l.s[l.i] != '\t' && l.s[l.i] != ',' {
			return nil, l.errorf("unexpected %q after auth scheme %q", l.s[l.i], scheme)
		}
		afterScheme = true
	}
}

// authLexer walks a WWW-Authenticate value.
type authLexer struct {
	s string
	i int
}

func (l *authLexer) eof() bool { return l.i >= len(l.s) }

func (l *authLexer) errorf(format string, args ...any) error {
	return fmt.Errorf("WWW-Authenticate at byte %d: %s", l.i, fmt.Sprintf(format, args...))
}

func (l *authLexer) skipOWS() {
	for !l.eof() && (l.s[l.i] == ' ' || l.s[l.i] == '\t') {
		l.i++
	}
}

// skipSeparators skips white space and commas (empty list elements are
// allowed) and reports whether there was a comma.
func (l *authLexer) skipSeparators() bool {
	comma := false
	for !l.eof() && (l.s[l.i] == ' ' || l.s[l.i] == '\t' || l.s[l.i] == ',') {
		comma = comma || l.s[l.i] == ','
		l.i++
	}
	return comma
}

// endItem requires the end of the value or a comma after an item.
func (l *authLexer) endItem() error {
	l.skipOWS()
	if l.eof() || l.s[l.i] == ',' {
		return nil
	}
	return l.errorf("expected ',' or end of header, found %q", l.s[l.i])
}

func (l *authLexer) token() string {
	start := l.i
	for !l.eof() && isTokenChar(l.s[l.i]) {
		l.i++
	}
	return l.s[start:l.i]
}

// param reads name BWS "=" BWS (token / quoted-string). When what follows
// is not a parameter it reports ok=false and consumes nothing.
func (l *authLexer) param() (name, value string, ok bool, err error) {
	start := l.i
	name = l.token()
	l.skipOWS()
	if name == "" || l.eof() || l.s[l.i] != '=' {
		l.i = start
		return "", "", false, nil
	}
	l.i++
	l.skipOWS()
	if !l.eof() && l.s[l.i] == '"' {
		value, err = l.quoted()
		return name, value, err == nil, err
	}
	if value = l.token(); value == "" {
		l.i = start // perhaps a token68 such as "abc=="
		return "", "", false, nil
	}
	return name, value, true, nil
}

// quoted reads a quoted-string, undoing backslash escapes.
func (l *authLexer) quoted() (string, error) {
	start := l.i
	l.i++ // opening quote
	var b strings.Builder
	for !l.eof() {
		c := l.s[l.i]
		switch {
		case c == '"':
			l.i++
			return b.String(), nil
		case c == '\\' && l.i+1 < len(l.s):
			b.WriteByte(l.s[l.i+1])
			l.i += 2
		case c < ' ' && c != '\t' || c == 0x7f:
			return "", l.errorf("control character %q in quoted string", c)
		default:
			b.WriteByte(c)
			l.i++
		}
	}
	l.i = start
	return "", l.errorf("unterminated quoted string")
}

// token68 reads a token68 (RFC 9110 section 11.2) that ends the item.
func (l *authLexer) token68() (string, bool) {
	start := l.i
	for !l.eof() && isToken68Char(l.s[l.i]) {
		l.i++
	}
	if l.i == start {
		return "", false
	}
	for !l.eof() && l.s[l.i] == '=' {
		l.i++
	}
	end := l.i
	l.skipOWS()
	if !l.eof() && l.s[l.i] != ',' {
		l.i = start
		return "", false
	}
	return l.s[start:end], true
}

func isTokenChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68Char(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}
