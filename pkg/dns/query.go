package dns

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

const (
	// ednsPayload is the UDP payload size advertised with EDNS0: the DNS
	// flag day 2020 value, large enough for most answers and small enough
	// to avoid IP fragmentation.
	ednsPayload = 1232
	// udpBufSize leaves room for servers that ignore the advertised size.
	udpBufSize = 4096
	// maxCNAMEHops bounds alias chains (and loops) per looked-up name.
	maxCNAMEHops = 8
)

// reply is the part of a DNS response the resolver uses.
type reply struct {
	rcode   dnsmessage.RCode
	answers []answerRR
}

// answerRR is one IN-class A, AAAA or CNAME record of an answer section.
type answerRR struct {
	name   string
	typ    dnsmessage.Type
	ttl    uint32
	addr   netip.Addr // A, AAAA
	target string     // CNAME
}

// typeResult is the outcome of looking one record type up.
type typeResult struct {
	recs     []addrRecord
	ttl      uint32 // minimum TTL over the alias chain and recs
	server   netip.AddrPort
	nxdomain bool
	loop     bool  // the alias chain did not end within maxCNAMEHops
	err      error // temporary failure
}

// lookupType asks for typ records of fqdn, following CNAMEs (re-asking for
// the target when a server returns the alias without its records).
func (r *Resolver) lookupType(ctx context.Context, fqdn string, typ dnsmessage.Type) typeResult {
	name := fqdn
	minTTL := ^uint32(0)
	for range maxCNAMEHops {
		qname, err := dnsmessage.NewName(name)
		if err != nil {
			return typeResult{err: fmt.Errorf("query name %q: %w", name, err)}
		}
		q := dnsmessage.Question{Name: qname, Type: typ, Class: dnsmessage.ClassINET}
		rep, server, err := r.ask(ctx, q)
		if err != nil {
			return typeResult{err: err}
		}
		if rep.rcode == dnsmessage.RCodeNameError {
			return typeResult{nxdomain: true, server: server}
		}
		recs, target, chainTTL, ok := followChain(rep.answers, name, typ)
		if !ok {
			return typeResult{loop: true, server: server}
		}
		minTTL = min(minTTL, chainTTL)
		if len(recs) > 0 {
			for _, rec := range recs {
				minTTL = min(minTTL, cacheTTL(rec.ttl))
			}
			return typeResult{recs: recs, ttl: minTTL, server: server}
		}
		if strings.EqualFold(target, name) {
			return typeResult{server: server} // the name exists without such records
		}
		name = target
	}
	return typeResult{loop: true}
}

// followChain follows CNAME records from name within one answer section and
// returns the typ records of the name reached, that name, and the lowest
// TTL of the aliases followed; ok is false when the chain does not end
// within maxCNAMEHops (a loop).
func followChain(answers []answerRR, name string, typ dnsmessage.Type) (recs []addrRecord, cur string, minTTL uint32, ok bool) {
	minTTL = ^uint32(0)
	cur = name
	for hop := 0; ; hop++ {
		next := ""
		for _, a := range answers {
			if a.typ == dnsmessage.TypeCNAME && strings.EqualFold(a.name, cur) {
				next, minTTL = a.target, min(minTTL, cacheTTL(a.ttl))
				break
			}
		}
		if next == "" {
			break
		}
		if hop == maxCNAMEHops {
			return nil, cur, minTTL, false
		}
		cur = next
	}
	for _, a := range answers {
		if a.typ == typ && strings.EqualFold(a.name, cur) {
			recs = append(recs, addrRecord{name: a.name, ttl: a.ttl, addr: a.addr, typ: typ})
		}
	}
	return recs, cur, minTTL, true
}

// cacheTTL is the TTL to cache by: RFC 2181 section 8 says values with the
// top bit set mean zero. The record text keeps the value as received.
func cacheTTL(ttl uint32) uint32 {
	if ttl > maxTTL {
		return 0
	}
	return ttl
}

// ask sends q to the servers in turn, Attempts rounds, until one gives an
// authoritative-enough answer (NOERROR or NXDOMAIN). SERVFAIL, REFUSED and
// the like move on to the next server, as timeouts and malformed replies do.
func (r *Resolver) ask(ctx context.Context, q dnsmessage.Question) (reply, netip.AddrPort, error) {
	var lastErr error
	for range r.attempts {
		for _, server := range r.servers {
			rep, err := r.exchange(ctx, server, q)
			if ctx.Err() != nil {
				return reply{}, server, ctx.Err()
			}
			if err != nil {
				lastErr = err
				continue
			}
			if rep.rcode == dnsmessage.RCodeSuccess || rep.rcode == dnsmessage.RCodeNameError {
				return rep, server, nil
			}
			lastErr = fmt.Errorf("query %s %s at %s: server answered %s", q.Name, q.Type, server, rep.rcode)
		}
	}
	return reply{}, netip.AddrPort{}, lastErr
}

// exchange asks one server over UDP, and again over TCP if the UDP reply
// is truncated. Each transport gets its own Timeout.
func (r *Resolver) exchange(ctx context.Context, server netip.AddrPort, q dnsmessage.Question) (reply, error) {
	id := uint16(rand.Uint32())
	msg, err := packQuery(id, q)
	if err != nil {
		return reply{}, fmt.Errorf("pack query %s %s: %w", q.Name, q.Type, err)
	}
	r.metrics.queries.WithLabelValues("udp").Inc()
	rep, truncated, err := r.roundTripUDP(ctx, server, id, q, msg)
	if err != nil || !truncated {
		return rep, err
	}
	r.metrics.queries.WithLabelValues("tcp").Inc()
	return r.roundTripTCP(ctx, server, id, q, msg)
}

// packQuery builds a recursive query with an EDNS0 OPT record.
func packQuery(id uint16, q dnsmessage.Question) ([]byte, error) {
	b := dnsmessage.NewBuilder(make([]byte, 2, 514), dnsmessage.Header{ID: id, RecursionDesired: true})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAdditionals(); err != nil {
		return nil, err
	}
	var rh dnsmessage.ResourceHeader
	if err := rh.SetEDNS0(ednsPayload, dnsmessage.RCodeSuccess, false); err != nil {
		return nil, err
	}
	if err := b.OPTResource(rh, dnsmessage.OPTResource{}); err != nil {
		return nil, err
	}
	msg, err := b.Finish()
	if err != nil {
		return nil, err
	}
	// The first two bytes are room for the TCP length prefix.
	binary.BigEndian.PutUint16(msg, uint16(len(msg)-2))
	return msg, nil
}

// dialServer connects to server and makes ctx's end (timeout or
// cancellation) interrupt any read or write on the connection.
func (r *Resolver) dialServer(ctx context.Context, network string, server netip.AddrPort) (net.Conn, func(), error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, server.String())
	if err != nil {
		return nil, nil, fmt.Errorf("dial %s %s: %w", network, server, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	return c, func() { stop(); _ = c.Close() }, nil
}

// roundTripUDP sends msg and waits for the matching reply. Datagrams that
// do not parse or do not match the query are ignored, as Go's resolver does
// (golang.org/issue/13281), since they may be forgeries; the wait then ends
// with the timeout.
func (r *Resolver) roundTripUDP(ctx context.Context, server netip.AddrPort, id uint16, q dnsmessage.Question, msg []byte) (reply, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	c, done, err := r.dialServer(ctx, "udp", server)
	if err != nil {
		return reply{}, false, err
	}
	defer done()
	if _, err := c.Write(msg[2:]); err != nil {
		return reply{}, false, fmt.Errorf("query %s %s at %s/udp: %w", q.Name, q.Type, server, err)
	}
	buf := make([]byte, udpBufSize)
	ignored := 0
	for {
		n, err := c.Read(buf)
		if err != nil {
			return reply{}, false, fmt.Errorf("query %s %s at %s/udp (%d invalid replies ignored): %w",
				q.Name, q.Type, server, ignored, err)
		}
		p, h, ok := matchReply(buf[:n], id, q)
		if !ok {
			ignored++
			continue
		}
		if h.Truncated {
			return reply{}, true, nil
		}
		rep, err := parseAnswers(&p, h)
		if err != nil {
			return reply{}, false, fmt.Errorf("reply to %s %s from %s/udp: %w", q.Name, q.Type, server, err)
		}
		return rep, false, nil
	}
}

// roundTripTCP sends msg with its length prefix and reads one reply.
func (r *Resolver) roundTripTCP(ctx context.Context, server netip.AddrPort, id uint16, q dnsmessage.Question, msg []byte) (reply, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	c, done, err := r.dialServer(ctx, "tcp", server)
	if err != nil {
		return reply{}, err
	}
	defer done()
	if _, err := c.Write(msg); err != nil {
		return reply{}, fmt.Errorf("query %s %s at %s/tcp: %w", q.Name, q.Type, server, err)
	}
	var lenBuf [2]byte
	if _, err := io.ReadFull(c, lenBuf[:]); err != nil {
		return reply{}, fmt.Errorf("read reply length from %s/tcp: %w", server, err)
	}
	buf := make([]byte, binary.BigEndian.Uint16(lenBuf[:]))
	if _, err := io.ReadFull(c, buf); err != nil {
		return reply{}, fmt.Errorf("read %d-byte reply from %s/tcp: %w", len(buf), server, err)
	}
	p, h, ok := matchReply(buf, id, q)
	if !ok {
		return reply{}, fmt.Errorf("reply from %s/tcp does not parse or does not match query %s %s", server, q.Name, q.Type)
	}
	rep, err := parseAnswers(&p, h)
	if err != nil {
		return reply{}, fmt.Errorf("reply to %s %s from %s/tcp: %w", q.Name, q.Type, server, err)
	}
	return rep, nil
}

// matchReply parses the header and first question of msg and reports
// whether it answers the query with this id and question.
func matchReply(msg []byte, id uint16, q dnsmessage.Question) (dnsmessage.Parser, dnsmessage.Header, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil || !h.Response || h.ID != id {
		return p, h, false
	}
	got, err := p.Question()
	if err != nil || got.Type != q.Type || got.Class != q.Class || !strings.EqualFold(got.Name.String(), q.Name.String()) {
		return p, h, false
	}
	return p, h, true
}

// parseAnswers reads the IN-class A, AAAA and CNAME records of the answer
// section; other records are skipped, the authority and additional
// sections are not read.
func parseAnswers(p *dnsmessage.Parser, h dnsmessage.Header) (reply, error) {
	rep := reply{rcode: h.RCode}
	if err := p.SkipAllQuestions(); err != nil {
		return rep, fmt.Errorf("question section: %w", err)
	}
	for i := 0; ; i++ {
		rh, err := p.AnswerHeader()
		if errors.Is(err, dnsmessage.ErrSectionDone) {
			return rep, nil
		}
		if err != nil {
			return rep, fmt.Errorf("answer %d: %w", i, err)
		}
		rr, keep, err := parseAnswer(p, rh)
		if err != nil {
			return rep, fmt.Errorf("answer %d (%s %s): %w", i, rh.Name, rh.Type, err)
		}
		if keep {
			rep.answers = append(rep.answers, rr)
		}
	}
}

// parseAnswer reads the body of one answer record.
func parseAnswer(p *dnsmessage.Parser, rh dnsmessage.ResourceHeader) (answerRR, bool, error) {
	rr := answerRR{name: rh.Name.String(), typ: rh.Type, ttl: rh.TTL}
	if rh.Class != dnsmessage.ClassINET {
		return rr, false, p.SkipAnswer()
	}
	switch rh.Type {
	case dnsmessage.TypeA:
		a, err := p.AResource()
		rr.addr = netip.AddrFrom4(a.A)
		return rr, err == nil, err
	case dnsmessage.TypeAAAA:
		a, err := p.AAAAResource()
		rr.addr = netip.AddrFrom16(a.AAAA)
		return rr, err == nil, err
	case dnsmessage.TypeCNAME:
		c, err := p.CNAMEResource()
		rr.target = c.CNAME.String()
		return rr, err == nil, err
	default:
		return rr, false, p.SkipAnswer()
	}
}
