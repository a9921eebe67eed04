package dns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// mode is how the test server misbehaves for a name.
type mode int

const (
	modeNormal       mode = iota
	modeTruncate          // UDP: TC bit and no answers; TCP: the full answer
	modeGarbage           // UDP: bytes that are not DNS, nothing else
	modeGarbageFirst      // UDP: garbage, then a reply with the wrong ID, then the answer
	modeSilent            // no reply at all
	modeMalformed         // valid header and question, answer section cut short
	modeHold              // answer only once release is closed
)

// zone is what the test server knows about one name.
type zone struct {
	a, aaaa []string
	ttl     uint32
	cname   string // answer with this alias first
	inline  bool   // with cname: add the target's records to the same reply
	rcode   dnsmessage.RCode
	mode    mode
}

// dnsServer is a real name server on loopback (UDP and TCP, same port)
// answering from a map of zones.
type dnsServer struct {
	addr    netip.AddrPort
	udp     *net.UDPConn
	tcp     *net.TCPListener
	wg      sync.WaitGroup
	stop    chan struct{}
	release chan struct{}

	mu      sync.Mutex
	zones   map[string]zone
	queries map[string]int // "udp A example.org."
}

// startServer listens on ip (a 127/8 address) until the test ends.
func startServer(t *testing.T, ip string) *dnsServer {
	t.Helper()
	s := &dnsServer{stop: make(chan struct{}), release: make(chan struct{}),
		zones: map[string]zone{}, queries: map[string]int{}}
	for try := 0; ; try++ {
		udp, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(ip+":0")))
		if err != nil {
			t.Fatalf("listen udp: %v", err)
		}
		port := udp.LocalAddr().(*net.UDPAddr).AddrPort().Port()
		tcp, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(ip), port)))
		if err != nil {
			_ = udp.Close()
			if try < 10 {
				continue
			}
			t.Fatalf("listen tcp: %v", err)
		}
		s.udp, s.tcp, s.addr = udp, tcp, netip.AddrPortFrom(netip.MustParseAddr(ip), port)
		break
	}
	s.wg.Add(2)
	go s.serveUDP()
	go s.serveTCP()
	t.Cleanup(func() {
		close(s.stop)
		_ = s.udp.Close()
		_ = s.tcp.Close()
		s.wg.Wait()
	})
	return s
}

// set defines name (with or without final dot).
func (s *dnsServer) set(name string, z zone) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.zones[strings.ToLower(strings.TrimSuffix(name, "."))+"."] = z
}

// count returns how many queries arrived for transport/type/name ("" type
// or transport: any).
func (s *dnsServer) count(transport, typ, name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, v := range s.queries {
		f := strings.Fields(k)
		if (transport == "" || f[0] == transport) && (typ == "" || f[1] == typ) && (name == "" || f[2] == name+".") {
			n += v
		}
	}
	return n
}

func (s *dnsServer) serveUDP() {
	defer s.wg.Done()
	for {
		buf := make([]byte, 4096)
		n, from, err := s.udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for _, out := range s.handle(buf[:n], "udp") {
				_, _ = s.udp.WriteToUDPAddrPort(out, from)
			}
		}()
	}
}

func (s *dnsServer) serveTCP() {
	defer s.wg.Done()
	for {
		c, err := s.tcp.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			var l [2]byte
			if _, err := io.ReadFull(c, l[:]); err != nil {
				return
			}
			msg := make([]byte, binary.BigEndian.Uint16(l[:]))
			if _, err := io.ReadFull(c, msg); err != nil {
				return
			}
			for _, out := range s.handle(msg, "tcp") {
				_, _ = c.Write(binary.BigEndian.AppendUint16(nil, uint16(len(out))))
				_, _ = c.Write(out)
			}
		}()
	}
}

// handle returns the datagrams (or TCP messages) to send back.
func (s *dnsServer) handle(msg []byte, transport string) [][]byte {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	s.mu.Lock()
	s.queries[fmt.Sprintf("%s %s %s", transport, strings.TrimPrefix(q.Type.String(), "Type"), strings.ToLower(q.Name.String()))]++
	z, known := s.zones[strings.ToLower(q.Name.String())]
	s.mu.Unlock()
	if !known {
		z = zone{rcode: dnsmessage.RCodeNameError}
	}
	switch {
	case z.mode == modeSilent:
		return nil
	case z.mode == modeHold:
		select {
		case <-s.release:
		case <-s.stop:
			return nil
		}
	case z.mode == modeTruncate && transport == "udp":
		return [][]byte{s.reply(h.ID, q, zone{}, true)}
	case z.mode == modeGarbage && transport == "udp":
		return [][]byte{[]byte("\xff\xff this is not a DNS message")}
	case z.mode == modeGarbageFirst && transport == "udp":
		return [][]byte{[]byte("\x00\x01garbage"), s.reply(h.ID+1, q, z, false), s.reply(h.ID, q, z, false)}
	case z.mode == modeMalformed:
		out := s.reply(h.ID, q, z, false)
		return [][]byte{out[:len(out)-3]}
	}
	return [][]byte{s.reply(h.ID, q, z, false)}
}

// reply builds the answer to q from z.
func (s *dnsServer) reply(id uint16, q dnsmessage.Question, z zone, truncated bool) []byte {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: id, Response: true, RecursionDesired: true,
		RecursionAvailable: true, RCode: z.rcode, Truncated: truncated})
	b.EnableCompression()
	must(b.StartQuestions())
	must(b.Question(q))
	must(b.StartAnswers())
	owner := q.Name
	if z.cname != "" {
		target := dnsmessage.MustNewName(z.cname)
		must(b.CNAMEResource(dnsmessage.ResourceHeader{Name: owner, Class: dnsmessage.ClassINET, TTL: z.ttl},
			dnsmessage.CNAMEResource{CNAME: target}))
		if !z.inline {
			return finish(b)
		}
		s.mu.Lock()
		z = s.zones[strings.ToLower(z.cname)]
		s.mu.Unlock()
		owner = target
	}
	hdr := dnsmessage.ResourceHeader{Name: owner, Class: dnsmessage.ClassINET, TTL: z.ttl}
	switch q.Type {
	case dnsmessage.TypeA:
		for _, a := range z.a {
			must(b.AResource(hdr, dnsmessage.AResource{A: netip.MustParseAddr(a).As4()}))
		}
	case dnsmessage.TypeAAAA:
		for _, a := range z.aaaa {
			must(b.AAAAResource(hdr, dnsmessage.AAAAResource{AAAA: netip.MustParseAddr(a).As16()}))
		}
	}
	return finish(b)
}

func finish(b dnsmessage.Builder) []byte {
	out, err := b.Finish()
	must(err)
	return out
}

// must panics on a builder error: the test server's own zones are wrong.
func must(err error) {
	if err != nil && !errors.Is(err, dnsmessage.ErrSectionDone) {
		panic(err)
	}
}
