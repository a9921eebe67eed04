package cookies

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// entry is one stored cookie. Creation and expiry are Unix microseconds and
// seconds: the store script compares them without decoding the rest.
type entry struct {
	Name     string
	Value    string
	Domain   string // the request host for host-only cookies
	Path     string
	HostOnly bool
	Secure   bool
	HTTPOnly bool
	Quoted   bool  // the value was sent in double quotes
	Created  int64 // Unix microseconds; kept when a cookie is replaced
	Expires  int64 // Unix seconds; 0 for a session cookie
}

// entryVersion starts every stored value, so a future format can coexist.
const entryVersion = "v1"

// entryFields is the number of TAB-separated fields of a stored value:
// version, created, expires, flags, name, domain, path, value. The value is
// last, so only the value could ever hold a TAB (none of the checks let one
// in, but decoding stays unambiguous).
const entryFields = 8

// field is the hash field naming the cookie's identity (RFC 6265 5.3 step
// 11): a cookie with the same name, domain and path replaces it.
func (e *entry) field() string {
	return e.Name + ";" + e.Domain + ";" + e.Path
}

// flags encodes the booleans as letters, "-" when none is set.
func (e *entry) flags() string {
	var b strings.Builder
	for _, f := range []struct {
		on bool
		c  byte
	}{{e.HostOnly, 'h'}, {e.Secure, 's'}, {e.HTTPOnly, 'o'}, {e.Quoted, 'q'}} {
		if f.on {
			b.WriteByte(f.c)
		}
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

// tail is the stored value after the creation time; the store script puts
// the creation time in front (keeping an existing cookie's own).
func (e *entry) tail() string {
	return strings.Join([]string{strconv.FormatInt(e.Expires, 10), e.flags(), e.Name, e.Domain, e.Path, e.Value}, "\t")
}

// encode is the full stored value.
func (e *entry) encode() string {
	return entryVersion + "\t" + strconv.FormatInt(e.Created, 10) + "\t" + e.tail()
}

// decodeEntry parses a stored value. Its errors never include the value.
func decodeEntry(s string) (entry, error) {
	parts := strings.SplitN(s, "\t", entryFields)
	if len(parts) != entryFields {
		return entry{}, fmt.Errorf("stored cookie has %d fields, want %d", len(parts), entryFields)
	}
	if parts[0] != entryVersion {
		return entry{}, fmt.Errorf("stored cookie has unknown version %q", truncate(parts[0], 8))
	}
	created, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || created < 0 {
		return entry{}, errors.New("stored cookie has a bad creation time")
	}
	expires, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || expires < 0 {
		return entry{}, errors.New("stored cookie has a bad expiry time")
	}
	e := entry{Created: created, Expires: expires, Name: parts[4], Domain: parts[5], Path: parts[6], Value: parts[7]}
	for _, c := range []byte(parts[3]) {
		switch c {
		case 'h':
			e.HostOnly = true
		case 's':
			e.Secure = true
		case 'o':
			e.HTTPOnly = true
		case 'q':
			e.Quoted = true
		case '-':
		default:
			return entry{}, fmt.Errorf("stored cookie has unknown flag %q", c)
		}
	}
	if e.Name == "" || e.Domain == "" || !strings.HasPrefix(e.Path, "/") {
		return entry{}, errors.New("stored cookie lacks a name, domain or path")
	}
	return e, nil
}

// cookie is what a request carries: name and value only, as
// net/http/cookiejar returns them.
func (e *entry) cookie() *http.Cookie {
	return &http.Cookie{Name: e.Name, Value: e.Value, Quoted: e.Quoted}
}

// expired reports whether a persistent cookie's expiry has passed at now
// (Unix seconds).
func (e *entry) expired(now int64) bool {
	return e.Expires != 0 && e.Expires <= now
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
