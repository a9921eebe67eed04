package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// maxTTL is the largest TTL honoured (see cacheTTL).
const maxTTL = 1<<31 - 1

// lookup performs one uncached lookup of name and counts it.
func (r *Resolver) lookup(ctx context.Context, name string) (*Answer, error) {
	start := time.Now()
	var ans *Answer
	var err error
	if r.static != nil {
		ans, err = r.lookupStatic(ctx, name)
	} else {
		ans, err = r.lookupDNS(ctx, name)
	}
	if ctx.Err() != nil && err != nil {
		return nil, err // abandoned: says nothing about the host
	}
	r.metrics.duration.Observe(time.Since(start).Seconds())
	var le *LookupError
	switch {
	case err == nil:
		r.metrics.lookups.WithLabelValues(resultOK).Inc()
	case errors.As(err, &le) && le.NotFound:
		r.metrics.lookups.WithLabelValues(resultNotFound).Inc()
	default:
		r.metrics.lookups.WithLabelValues(resultError).Inc()
	}
	return ans, err
}

// lookupDNS asks the name servers for A and AAAA records in parallel.
func (r *Resolver) lookupDNS(ctx context.Context, name string) (*Answer, error) {
	fetched := r.now()
	fqdn := name + "."
	aaaa := make(chan typeResult, 1)
	go func() { aaaa <- r.lookupType(ctx, fqdn, dnsmessage.TypeAAAA) }()
	v4 := r.lookupType(ctx, fqdn, dnsmessage.TypeA)
	v6 := <-aaaa
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	recs := append(append([]addrRecord(nil), v4.recs...), v6.recs...)
	addrs := usableAddrs(recs)
	if len(addrs) == 0 {
		return nil, failure(name, v4, v6, len(recs) > 0)
	}
	if v4.err != nil || v6.err != nil {
		r.log.Debug("partial dns answer", "host", name, "a_err", v4.err, "aaaa_err", v6.err)
	}
	ttl := uint32(maxTTL)
	server := v6.server
	if len(v4.recs) > 0 {
		ttl, server = min(ttl, v4.ttl), v4.server
	}
	if len(v6.recs) > 0 {
		ttl = min(ttl, v6.ttl)
	}
	return r.answer(name, fetched, addrs, time.Duration(ttl)*time.Second, serverIP(server), buildRecord(fetched, recs)), nil
}

// serverIP is Answer.Server for the name server that answered. A
// link-local server's zone (fe80::1%eth0) is left out: it names an
// interface of this machine, and WARC-IP-Address must be a plain IP.
func serverIP(server netip.AddrPort) string {
	return server.Addr().WithZone("").String()
}

// failure explains why neither query gave a usable address. NXDOMAIN or a
// CNAME loop from either query, or both answering without addresses, is
// permanent (dnsjava's Lookup calls a loop unrecoverable too); any other
// failure is temporary.
func failure(name string, v4, v6 typeResult, unusable bool) *LookupError {
	switch {
	case v4.nxdomain || v6.nxdomain:
		return &LookupError{Host: name, NotFound: true, Err: errors.New("no such host (NXDOMAIN)")}
	case v4.loop || v6.loop:
		return &LookupError{Host: name, NotFound: true, Err: fmt.Errorf("CNAME chain longer than %d (loop?)", maxCNAMEHops)}
	case v4.err != nil:
		return &LookupError{Host: name, Err: v4.err}
	case v6.err != nil:
		return &LookupError{Host: name, Err: v6.err}
	case unusable:
		return &LookupError{Host: name, NotFound: true, Err: fmt.Errorf("%w usable (only 0.0.0.0 or ::)", errNoAddresses)}
	default:
		return &LookupError{Host: name, NotFound: true, Err: errNoAddresses}
	}
}

// usableAddrs lists the addresses worth connecting to; Heritrix refuses
// 0.0.0.0 too.
func usableAddrs(recs []addrRecord) []netip.Addr {
	addrs := make([]netip.Addr, 0, len(recs))
	for _, rec := range recs {
		if !rec.addr.IsUnspecified() {
			addrs = append(addrs, rec.addr)
		}
	}
	return addrs
}

// lookupStatic asks the Static Lookuper and dresses its answer as a DNS
// one: TTL = MinValidity, records synthesised in the same text form so the
// demo's WARCs carry dns: records like a real crawl's. Server stays empty,
// so the dns: record has no WARC-IP-Address: no name server was asked, and
// a loopback address there would name a server that does not exist.
func (r *Resolver) lookupStatic(ctx context.Context, name string) (*Answer, error) {
	fetched := r.now()
	ipas, err := r.static.LookupIPAddr(ctx, name)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var de *net.DNSError
		notFound := errors.As(err, &de) && de.IsNotFound
		return nil, &LookupError{Host: name, NotFound: notFound, Err: err}
	}
	ttl := uint32(min(r.minValidity/time.Second, maxTTL))
	var v4, v6 []addrRecord
	for _, ipa := range ipas {
		a, ok := netip.AddrFromSlice(ipa.IP)
		if !ok {
			continue
		}
		if a.Is4() || a.Is4In6() {
			v4 = append(v4, addrRecord{name: name + ".", ttl: ttl, addr: a.Unmap(), typ: dnsmessage.TypeA})
		} else {
			v6 = append(v6, addrRecord{name: name + ".", ttl: ttl, addr: a, typ: dnsmessage.TypeAAAA})
		}
	}
	recs := append(v4, v6...)
	addrs := usableAddrs(recs)
	if len(addrs) == 0 {
		return nil, &LookupError{Host: name, NotFound: true, Err: errNoAddresses}
	}
	return r.answer(name, fetched, addrs, r.minValidity, "", buildRecord(fetched, recs)), nil
}

// answer assembles an Answer, valid for max(ttl, MinValidity).
func (r *Resolver) answer(name string, fetched time.Time, addrs []netip.Addr, ttl time.Duration, server string, record []byte) *Answer {
	return &Answer{
		Host:    name,
		Addrs:   addrs,
		TTL:     ttl,
		Fetched: fetched,
		Expires: fetched.Add(max(ttl, r.minValidity)),
		Server:  server,
		Record:  record,
	}
}
