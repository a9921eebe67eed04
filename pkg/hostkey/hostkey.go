// Package hostkey computes the Kafka message key for a URL: the hex of the
// little-endian bytes of murmur3_32 (seed 0) of the URL's authority, as the UK
// Web Archive's producers compute it (ARCHITECTURE.md section 3). Every URL of
// a host gets the same key, so the host lands on the same partition whichever
// client wrote it.
package hostkey

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// Of returns the key for an authority (host[:port], already normalised).
func Of(authority string) string {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], Murmur3([]byte(authority), 0))
	return hex.EncodeToString(b[:])
}

// ForURL returns the key for a URL: Of(Authority(rawURL)).
func ForURL(rawURL string) (string, error) {
	a, err := Authority(rawURL)
	if err != nil {
		return "", err
	}
	return Of(a), nil
}

// Authority returns the part of rawURL that names its host queue: the
// lowercase host, with ":port" only when the port is explicit and not the
// scheme's default; for "dns:host" URIs, the host alone. Userinfo is never
// part of it.
func Authority(rawURL string) (string, error) {
	if len(rawURL) >= 4 && strings.EqualFold(rawURL[:4], "dns:") {
		host := strings.ToLower(strings.TrimSpace(rawURL[4:]))
		if host == "" || strings.ContainsAny(host, "/?# \t") {
			return "", fmt.Errorf("host key: dns URI %q: want dns:<host>", rawURL)
		}
		return host, nil
	}
	if a, ok := NormalAuthority(rawURL); ok {
		return a, nil
	}
	if strings.TrimSpace(rawURL) == "" {
		return "", errors.New("host key: empty URL")
	}
	u, err := whatwg.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("host key: parse %q: %w", rawURL, err)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("host key: URL %q has no host", rawURL)
	}
	// WHATWG parsing already lowercases the host and drops a port equal to
	// the default of a special scheme (http, https, ftp, ws, wss).
	return u.Host(), nil
}

// NormalAuthority is Authority's fast path for an http(s) URL already in
// WHATWG-normalised form (lower-case name or dotted IPv4, no default port),
// which is what workers handle: the authority is then the text between
// "//" and the path, and the parser, at microseconds a URL, is skipped.
// It reports false for anything the parser might rewrite, and for other
// schemes; callers then parse.
func NormalAuthority(u string) (string, bool) {
	rest, ok := strings.CutPrefix(u, "http://")
	def := ":80"
	if !ok {
		rest, ok = strings.CutPrefix(u, "https://")
		def = ":443"
	}
	if !ok {
		return "", false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	a := rest[:end]
	return a, plainAuthority(a) && !strings.HasSuffix(a, def)
}

// plainAuthority accepts a lower-case DNS name whose last label does not
// start with a digit (so it is not an IPv4 form the parser would rewrite),
// or an IPv4 address in dotted-decimal form, with an optional port without
// leading zeros.
func plainAuthority(a string) bool {
	host, port, hasPort := strings.Cut(a, ":")
	if !plainName(host) && !dottedQuad(host) {
		return false
	}
	if !hasPort {
		return true
	}
	n, ok := decimal(port)
	return ok && port[0] != '0' && n <= 65535
}

// decimal parses 1 to 5 ASCII digits.
func decimal(s string) (int, bool) {
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func plainName(host string) bool {
	if host == "" || host[0] == '.' || host[0] == '-' {
		return false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	last := host[strings.LastIndexByte(host, '.')+1:]
	return last != "" && (last[0] < '0' || last[0] > '9')
}

// dottedQuad accepts four decimal parts of 0 to 255 without leading zeros:
// the form the parser gives every IPv4 address.
func dottedQuad(host string) bool {
	parts := 0
	for p := range strings.SplitSeq(host, ".") {
		parts++
		n, ok := decimal(p)
		if !ok || len(p) > 1 && p[0] == '0' || n > 255 {
			return false
		}
	}
	return parts == 4
}

// Murmur3 is MurmurHash3's x86 32-bit variant.
func Murmur3(data []byte, seed uint32) uint32 {
	const (
		c1 = 0xcc9e2d51
		c2 = 0x1b873593
	)
	h := seed
	n := len(data) / 4 * 4
	for i := 0; i < n; i += 4 {
		k := binary.LittleEndian.Uint32(data[i:])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	var k uint32
	switch tail := data[n:]; len(tail) {
	case 3:
		k ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(tail[0])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
	}
	h ^= uint32(len(data))
	// Final avalanche so every input bit affects every output bit.
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
