package dns

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// fuzzReply builds a seed reply: q answered by a CNAME to alias (when set)
// and then the given addresses owned by owner.
func fuzzReply(q dnsmessage.Question, rcode dnsmessage.RCode, cname string, owner string, addrs ...string) []byte {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7, Response: true, RCode: rcode})
	b.EnableCompression()
	must(b.StartQuestions())
	must(b.Question(q))
	must(b.StartAnswers())
	if cname != "" {
		must(b.CNAMEResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60},
			dnsmessage.CNAMEResource{CNAME: dnsmessage.MustNewName(cname)}))
	}
	for _, a := range addrs {
		hdr := dnsmessage.ResourceHeader{Name: dnsmessage.MustNewName(owner), Class: dnsmessage.ClassINET, TTL: 1 << 31}
		ip := netip.MustParseAddr(a)
		if ip.Is4() {
			must(b.AResource(hdr, dnsmessage.AResource{A: ip.As4()}))
		} else {
			must(b.AAAAResource(hdr, dnsmessage.AAAAResource{AAAA: ip.As16()}))
		}
	}
	return finish(b)
}

// FuzzParseAnswers feeds fuzzed bytes to the resolver's reply path as a
// name server's answer to the question the bytes themselves carry: match,
// parse the answer section, follow the alias chain and write the text/dns
// record. Nothing may panic, the chain must stop, and the record is one
// line per address with every byte of a name escaped (no newline can be
// smuggled into the WARC record).
func FuzzParseAnswers(f *testing.F) {
	qa := dnsmessage.Question{Name: dnsmessage.MustNewName("www.example.com."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}
	q6 := qa
	q6.Type = dnsmessage.TypeAAAA
	f.Add(fuzzReply(qa, dnsmessage.RCodeSuccess, "", "www.example.com.", "192.0.2.1", "192.0.2.2"))
	f.Add(fuzzReply(q6, dnsmessage.RCodeSuccess, "", "www.example.com.", "2001:db8::1", "::ffff:10.0.0.1"))
	f.Add(fuzzReply(qa, dnsmessage.RCodeSuccess, "cdn.example.net.", "cdn.example.net.", "198.51.100.7"))
	f.Add(fuzzReply(qa, dnsmessage.RCodeSuccess, "www.example.com.", "www.example.com."))
	f.Add(fuzzReply(qa, dnsmessage.RCodeNameError, "", ""))
	odd := qa
	odd.Name = dnsmessage.MustNewName("we\\(ird\\032name\\010.example.")
	f.Add(fuzzReply(odd, dnsmessage.RCodeSuccess, "", "we\\(ird\\032name\\010.example.", "192.0.2.9"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		var p dnsmessage.Parser
		h, err := p.Start(msg)
		if err != nil {
			return
		}
		q, err := p.Question()
		if err != nil {
			return
		}
		p, h, ok := matchReply(msg, h.ID, q)
		if !ok {
			return
		}
		rep, err := parseAnswers(&p, h)
		if err != nil {
			return
		}
		for _, typ := range []dnsmessage.Type{dnsmessage.TypeA, dnsmessage.TypeAAAA} {
			recs, _, _, ok := followChain(rep.answers, q.Name.String(), typ)
			if !ok {
				continue
			}
			for _, r := range recs {
				if r.typ != typ || !r.addr.IsValid() {
					t.Fatalf("record %+v for type %v", r, typ)
				}
			}
			rec := buildRecord(time.Date(2024, 1, 17, 8, 0, 0, 0, time.UTC), recs)
			lines := strings.Split(strings.TrimSuffix(string(rec), "\n"), "\n")
			if len(lines) != len(recs)+1 || lines[0] != "20240117080000" {
				t.Fatalf("record for %d answers has %d lines:\n%s", len(recs), len(lines), rec)
			}
			for _, l := range lines[1:] {
				if bytes.ContainsAny([]byte(l), "\r\x00") || strings.Count(l, "\tIN\t") != 1 {
					t.Fatalf("record line %q", l)
				}
			}
			_ = usableAddrs(recs)
		}
	})
}

// FuzzParseResolvConf reads fuzzed bytes as /etc/resolv.conf: every line
// that is not used is named in a problem with the file and its line, and
// the servers are at most maxResolvConfServers valid addresses on port 53.
func FuzzParseResolvConf(f *testing.F) {
	f.Add([]byte("# comment\nnameserver 10.0.0.1\nnameserver fe80::1%eth0 ; zone\nsearch example.com\noptions ndots:2\n"))
	f.Add([]byte("nameserver\nnameserver 1.2.3.4 5.6.7.8\nnameserver not-an-ip\n"))
	f.Add([]byte("nameserver 1.1.1.1\nnameserver 1.1.1.2\nnameserver 1.1.1.3\nnameserver 1.1.1.4\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		servers, problems, err := parseResolvConf("resolv.conf", bytes.NewReader(b))
		if err != nil {
			return // a line longer than the scanner's buffer
		}
		if len(servers) > maxResolvConfServers {
			t.Fatalf("%d servers", len(servers))
		}
		for _, s := range servers {
			if !s.Addr().IsValid() || s.Port() != 53 {
				t.Fatalf("server %v", s)
			}
		}
		for _, e := range problems {
			if !strings.HasPrefix(e.Error(), "resolv.conf:") {
				t.Fatalf("problem %q does not name the file and line", e)
			}
		}
	})
}

// FuzzParseServer parses a configured name server address.
func FuzzParseServer(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "10.0.0.1:5353", "[::1]:53", "[::1]", "::1", "x:0", "1.2.3.4:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ap, err := parseServer(s)
		if err == nil && (!ap.Addr().IsValid() || ap.Port() == 0) {
			t.Fatalf("parseServer(%q) = %v", s, ap)
		}
	})
}
