package fetch

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"syscall"
)

// refusedPrefix is an address range the guard refuses, with the reason
// reported to the operator.
type refusedPrefix struct {
	prefix netip.Prefix
	reason string
}

// refusedPrefixes lists every non-public range a crawler must not reach
// unless the profile allows it. It is a fixed table (not mutable state).
func refusedPrefixes() []refusedPrefix {
	table := []struct{ cidr, reason string }{
		{"0.0.0.0/8", "unspecified/this-network"},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "carrier-grade NAT"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.169.254/32", "cloud metadata"},
		{"169.254.0.0/16", "link-local"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "IETF protocol assignments"},
		{"192.168.0.0/16", "private"},
		{"198.18.0.0/15", "benchmarking"},
		{"224.0.0.0/4", "multicast"},
		{"240.0.0.0/4", "reserved/broadcast"},
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"64:ff9b:1::/48", "local-use NAT64"},
		{"100::/64", "discard-only"},
		{"fd00:ec2::254/128", "cloud metadata (AWS IPv6)"},
		{"fc00::/7", "unique-local (private)"},
		{"fe80::/10", "link-local"},
		{"ff00::/8", "multicast"},
	}
	out := make([]refusedPrefix, len(table))
	for i, e := range table {
		out[i] = refusedPrefix{netip.MustParsePrefix(e.cidr), e.reason}
	}
	return out
}

// guard decides which addresses may be fetched.
type guard struct {
	allowPrivate bool
	allowed      []netip.Prefix
	refused      []refusedPrefix
}

func newGuard(allowPrivate bool, allowed []netip.Prefix) *guard {
	return &guard{allowPrivate: allowPrivate, allowed: allowed, refused: refusedPrefixes()}
}

// check returns nil if a may be connected to, or an error wrapping
// ErrAddressRefused that names the range.
func (g *guard) check(a netip.Addr) error {
	if g.allowPrivate {
		return nil
	}
	for _, p := range g.allowed {
		if p.Contains(a.Unmap()) {
			return nil
		}
	}
	return checkAddr(g.refused, a)
}

// CheckAddress returns nil if a is a public unicast address, or an error
// wrapping ErrAddressRefused naming why not. IPv4-mapped, IPv4-compatible,
// NAT64, 6to4 and Teredo forms are also judged by the IPv4 addresses they
// carry, so ::ffff:127.0.0.1 is loopback. Exported so DNS and robots code
// can apply the same rule.
func CheckAddress(a netip.Addr) error {
	return checkAddr(refusedPrefixes(), a)
}

func checkAddr(refused []refusedPrefix, a netip.Addr) error {
	if !a.IsValid() {
		return &refusalError{why: "invalid address"}
	}
	orig := a
	for _, judged := range judgedAddrs(a.WithZone("")) {
		for _, r := range refused {
			if r.prefix.Contains(judged) {
				if judged != orig.WithZone("") {
					return &refusalError{why: fmt.Sprintf("%s carries %s, which is %s", orig, judged, r.reason)}
				}
				return &refusalError{why: fmt.Sprintf("%s is %s", orig, r.reason)}
			}
		}
	}
	return nil
}

// refusalError is the guard's refusal of one address: why names the
// address and its range ("127.0.0.1 is loopback").
type refusalError struct{ why string }

func (e *refusalError) Error() string { return e.why + ": " + ErrAddressRefused.Error() }
func (e *refusalError) Unwrap() error { return ErrAddressRefused }

// RefusalReason says why the address guard refused a fetch whose error is
// err: each refused address with its range ("127.0.0.1 is loopback"),
// joined by "; ". ok is false when the guard did not refuse it. Callers
// show it to an operator with the setting that allows such addresses.
func RefusalReason(err error) (reason string, ok bool) {
	if !errors.Is(err, ErrAddressRefused) {
		return "", false
	}
	var whys []string
	var walk func(error)
	walk = func(e error) {
		switch x := e.(type) {
		case *refusalError:
			whys = append(whys, x.why)
		case interface{ Unwrap() []error }:
			for _, c := range x.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		}
	}
	walk(err)
	if len(whys) == 0 { // the dial's own refusal of an unparseable address
		return err.Error(), true
	}
	return strings.Join(whys, "; "), true
}

// judgedAddrs returns a and every IPv4 address an IPv6 form of it routes
// to: IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96), NAT64
// (64:ff9b::/96), 6to4 (2002::/16) and Teredo (2001::/32, whose server and
// inverted client addresses are both judged).
func judgedAddrs(a netip.Addr) []netip.Addr {
	if a.Is4In6() {
		return []netip.Addr{a.Unmap()}
	}
	if !a.Is6() {
		return []netip.Addr{a}
	}
	b := a.As16()
	v4 := func(p []byte) netip.Addr { return netip.AddrFrom4([4]byte(p)) }
	switch {
	case b == [16]byte{} || b == [16]byte{15: 1}:
		return []netip.Addr{a} // :: and ::1 keep their IPv6 meaning
	case isZero(b[:12]):
		return []netip.Addr{a, v4(b[12:16])}
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && isZero(b[4:12]):
		return []netip.Addr{a, v4(b[12:16])}
	case b[0] == 0x20 && b[1] == 0x02:
		return []netip.Addr{a, v4(b[2:6])}
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0:
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{a, v4(b[4:8]), netip.AddrFrom4(client)}
	}
	return []netip.Addr{a}
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// control is a net.Dialer Control hook: it runs on the exact address the
// socket is about to connect to, so whatever resolution happened before,
// a refused address is never reached.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	if g.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s %s: unparseable address: %w", network, address, ErrAddressRefused)
	}
	return g.check(ap.Addr())
}
