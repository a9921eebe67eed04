package testweb

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Resolver answers name lookups for the synthetic hosts, like a DNS
// override. Its lookup methods have the signatures of net.Resolver's, so it
// can stand in wherever a consumer accepts that method set. Names it does
// not know fail with a *net.DNSError whose IsNotFound is true; it never
// asks real DNS.
type Resolver struct {
	addrs map[string]netip.Addr
}

// notFound is the error net.Resolver gives for a nonexistent name.
func notFound(host string) error {
	return &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// normalizeName lowercases a host name and drops one trailing dot.
func normalizeName(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// LookupNetIP looks host up for network "ip" or "ip4" (every synthetic
// host is IPv4 only, so "ip6" finds nothing). IP literals are returned as
// they are.
func (r *Resolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, &net.DNSError{Err: err.Error(), Name: host, IsTimeout: true}
	}
	switch network {
	case "ip", "ip4", "ip6":
	default:
		return nil, fmt.Errorf("lookup %s: unsupported network %q", host, network)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ip, ok := r.addrs[normalizeName(host)]
	if !ok || network == "ip6" {
		return nil, notFound(host)
	}
	return []netip.Addr{ip}, nil
}

// LookupIPAddr looks host up, like net.Resolver.LookupIPAddr.
func (r *Resolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	out := make([]net.IPAddr, len(ips))
	for i, ip := range ips {
		out[i] = net.IPAddr{IP: net.IP(ip.AsSlice())}
	}
	return out, nil
}

// LookupHost looks host up, like net.Resolver.LookupHost.
func (r *Resolver) LookupHost(ctx context.Context, host string) ([]string, error) {
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out, nil
}

// DialContext resolves the host of address through r and dials it; it has
// the signature of http.Transport.DialContext. It refuses addresses outside
// loopback, so a client built on it cannot reach the real network.
func (r *Resolver) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	ip := ips[0]
	if !ip.Unmap().IsLoopback() {
		return nil, fmt.Errorf("dial %s: %s is not a loopback address", address, ip)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
}

// NewResolver answers for the given names (lower case, no trailing dot):
// the resolver of a site served by another process, from its Addrs.
func NewResolver(addrs map[string]netip.Addr) *Resolver {
	m := make(map[string]netip.Addr, len(addrs))
	for name, ip := range addrs {
		m[normalizeName(name)] = ip
	}
	return &Resolver{addrs: m}
}

// Addrs returns a copy of the names the resolver answers for.
func (r *Resolver) Addrs() map[string]netip.Addr {
	m := make(map[string]netip.Addr, len(r.addrs))
	for name, ip := range r.addrs {
		m[name] = ip
	}
	return m
}
