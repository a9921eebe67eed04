package fetch

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/trawler-crawl/trawler/internal/refusedport"
)

// publicResolver gives public-looking addresses; only a proxy that maps
// every target to a local backend makes them reachable in tests.
var publicResolver = staticResolver{
	"site.test":     {"93.184.216.34"},
	"v6.test":       {"2606:2800:220:1:248:1893:25c8:1946"},
	"internal.test": {"10.1.1.1"},
	"rebind.test":   {"127.0.0.1"},
}

// pipe copies both ways between the client (read through a, which may
// hold buffered bytes, written through aConn) and b until either side ends.
func pipe(a io.Reader, aConn net.Conn, b net.Conn) {
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = io.Copy(b, a)
		_ = b.Close()
	})
	_, _ = io.Copy(aConn, b)
	_ = aConn.Close()
	_ = b.Close()
	wg.Wait()
}

// proxyLog records what a test proxy was asked for.
type proxyLog struct {
	mu      sync.Mutex
	targets []string
}

func (l *proxyLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.targets = append(l.targets, s)
}

func (l *proxyLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.targets...)
}

// httpProxy forwards absolute-form requests and CONNECT tunnels to backend
// whatever the target; it refuses CONNECT with 403 when refuse is set.
func httpProxy(t *testing.T, backend string, refuse bool, log *proxyLog) *rawServer {
	return startServer(t, func(ss *session) {
		head, err := ss.readRequest()
		if err != nil {
			return
		}
		line, _, _ := strings.Cut(string(head), "\r\n")
		log.add(line)
		if strings.HasPrefix(line, "CONNECT ") {
			if refuse {
				_ = ss.write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"))
				return
			}
			b, err := net.Dial("tcp", backend)
			if err != nil {
				return
			}
			_ = ss.write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
			pipe(ss.br, ss.conn, b)
			return
		}
		b, err := net.Dial("tcp", backend)
		if err != nil {
			return
		}
		if _, err := b.Write(head); err != nil {
			_ = b.Close()
			return
		}
		pipe(ss.br, ss.conn, b)
	})
}

// socksServer is a minimal SOCKS5 server (RFC 1928, RFC 1929) that
// connects every CONNECT to backend, or refuses it when refuse is set.
// With user set it demands username/password authentication.
func socksServer(t *testing.T, backend, user, pass string, refuse bool, log *proxyLog) *rawServer {
	return startServer(t, func(ss *session) {
		if !socksHandshake(ss.br, ss.conn, user, pass) {
			return
		}
		target, ok := socksRequest(ss.br)
		if !ok {
			return
		}
		log.add(target)
		if refuse {
			_, _ = ss.conn.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0}) // connection refused
			return
		}
		b, err := net.Dial("tcp", backend)
		if err != nil {
			return
		}
		_, _ = ss.conn.Write([]byte{5, 0, 0, 1, 127, 0, 0, 1, 0, 0})
		pipe(ss.br, ss.conn, b)
	})
}

func socksHandshake(br *bufio.Reader, w io.Writer, user, pass string) bool {
	hdr := make([]byte, 2)
	if _, err := io.ReadFull(br, hdr); err != nil || hdr[0] != 5 {
		return false
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return false
	}
	want := byte(0)
	if user != "" {
		want = 2
	}
	if !strings.ContainsRune(string(methods), rune(want)) {
		_, _ = w.Write([]byte{5, 0xff})
		return false
	}
	if _, err := w.Write([]byte{5, want}); err != nil || want == 0 {
		return err == nil
	}
	readField := func() string {
		n, err := br.ReadByte()
		if err != nil {
			return "\x00"
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			return "\x00"
		}
		return string(p)
	}
	if v, err := br.ReadByte(); err != nil || v != 1 {
		return false
	}
	u, p := readField(), readField()
	if u != user || p != pass {
		_, _ = w.Write([]byte{1, 1})
		return false
	}
	_, err := w.Write([]byte{1, 0})
	return err == nil
}

func socksRequest(br *bufio.Reader) (string, bool) {
	hdr := make([]byte, 4)
	if _, err := io.ReadFull(br, hdr); err != nil || hdr[0] != 5 || hdr[1] != 1 {
		return "", false
	}
	var host string
	switch hdr[3] {
	case 1, 4:
		p := make([]byte, map[byte]int{1: 4, 4: 16}[hdr[3]])
		if _, err := io.ReadFull(br, p); err != nil {
			return "", false
		}
		a, _ := netip.AddrFromSlice(p)
		host = a.String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return "", false
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			return "", false
		}
		host = "name:" + string(p)
	default:
		return "", false
	}
	port := make([]byte, 2)
	if _, err := io.ReadFull(br, port); err != nil {
		return "", false
	}
	return net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port)))), true
}

// tlsBackend serves resp over TLS with a self-signed certificate.
func tlsBackend(t *testing.T, resp string, sni chan<- string) *rawServer {
	cert := selfSigned(t)
	return startServer(t, func(ss *session) {
		tc := tls.Server(ss.conn, &tls.Config{Certificates: []tls.Certificate{cert},
			GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
				sni <- h.ServerName
				return nil, nil
			}})
		ss.conn = tc
		ss.br.Reset(tc)
		respond(resp)(ss)
	})
}

// proxiedFetcher has the guard on: targets resolve to public addresses and
// only the proxy (exempt from the guard) is local.
func proxiedFetcher(t *testing.T, proxyURL string) *Fetcher {
	t.Helper()
	cfg := Config{Proxy: proxyURL, SpoolDir: t.TempDir(), UserAgent: "trawler-test"}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	f := New(cfg, publicResolver)
	t.Cleanup(func() { _ = f.Close() })
	return f
}

const okResp = "HTTP/1.0 200 OK\r\nContent-Length: 7\r\n\r\nproxied"

func TestHTTPProxyAbsoluteForm(t *testing.T) {
	backend := startServer(t, respond(okResp))
	log := &proxyLog{}
	px := httpProxy(t, "127.0.0.1:"+backend.port(), false, log)
	f := proxiedFetcher(t, "http://127.0.0.1:"+px.port())
	resp, err := f.Fetch(context.Background(), Request{URL: "http://site.test/a/b?q=1#frag"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Close() })
	if !strings.HasPrefix(string(resp.RequestBytes), "GET http://site.test/a/b?q=1 HTTP/1.0\r\nHost: site.test\r\n") {
		t.Fatalf("request bytes %q", resp.RequestBytes)
	}
	if got := <-backend.requests; string(got) != string(resp.RequestBytes) {
		t.Fatalf("proxy received %q, recorded %q", got, resp.RequestBytes)
	}
	if string(readAll(t, resp.Payload)) != "proxied" || resp.IP.String() != "93.184.216.34" {
		t.Fatalf("payload or IP %v wrong", resp.IP)
	}
}

func TestProxyTunnelsToResolvedAddress(t *testing.T) {
	cases := []struct {
		name, url, proxy, wantTarget string
		tls                          bool
	}{
		{"CONNECT https", "https://site.test/s", "http", "CONNECT 93.184.216.34:443 HTTP/1.1", true},
		{"CONNECT https IPv6", "https://v6.test:8443/s", "http", "CONNECT [2606:2800:220:1:248:1893:25c8:1946]:8443 HTTP/1.1", true},
		{"socks5 http", "http://site.test/s", "socks5", "93.184.216.34:80", false},
		{"socks5 https", "https://site.test/s", "socks5", "93.184.216.34:443", true},
		{"socks5 IPv6", "http://v6.test/s", "socks5", "[2606:2800:220:1:248:1893:25c8:1946]:80", false},
		{"socks5 user/pass", "https://site.test/s", "socks5-auth", "93.184.216.34:443", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sni := make(chan string, 1)
			var backend *rawServer
			if tc.tls {
				backend = tlsBackend(t, okResp, sni)
			} else {
				backend = startServer(t, respond(okResp))
			}
			log := &proxyLog{}
			var proxyURL string
			switch tc.proxy {
			case "http":
				proxyURL = "http://127.0.0.1:" + httpProxy(t, "127.0.0.1:"+backend.port(), false, log).port()
			case "socks5":
				proxyURL = "socks5://127.0.0.1:" + socksServer(t, "127.0.0.1:"+backend.port(), "", "", false, log).port()
			default:
				proxyURL = "socks5://crawler:s%3Acret@127.0.0.1:" + socksServer(t, "127.0.0.1:"+backend.port(), "crawler", "s:cret", false, log).port()
			}
			f := proxiedFetcher(t, proxyURL)
			resp, err := f.Fetch(context.Background(), Request{URL: tc.url})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = resp.Close() })
			if !strings.HasPrefix(string(resp.RequestBytes), "GET /s HTTP/1.0\r\n") || string(readAll(t, resp.Payload)) != "proxied" {
				t.Fatalf("request %q", resp.RequestBytes)
			}
			if got := log.all(); len(got) != 1 || got[0] != tc.wantTarget {
				t.Fatalf("proxy asked for %q, want the resolved address %q", got, tc.wantTarget)
			}
			if tc.tls {
				if got := <-sni; got != strings.TrimSuffix(strings.Split(tc.url, "/")[2], ":8443") {
					t.Fatalf("SNI %q", got)
				}
			}
		})
	}
}

func TestProxyFailures(t *testing.T) {
	deadPort := strconv.Itoa(refusedport.Port(t))
	backend := startServer(t, respond(okResp))
	bAddr := "127.0.0.1:" + backend.port()
	log := &proxyLog{}
	cases := []struct{ name, proxy, url string }{
		{"http proxy down", "http://127.0.0.1:" + deadPort, "http://site.test/"},
		{"http proxy down (https)", "http://127.0.0.1:" + deadPort, "https://site.test/"},
		{"socks5 proxy down", "socks5://127.0.0.1:" + deadPort, "http://site.test/"},
		{"CONNECT refused", "http://127.0.0.1:" + httpProxy(t, bAddr, true, log).port(), "https://site.test/"},
		{"socks5 connect refused", "socks5://127.0.0.1:" + socksServer(t, bAddr, "", "", true, log).port(), "http://site.test/"},
		{"socks5 wrong password", "socks5://crawler:wrong@127.0.0.1:" + socksServer(t, bAddr, "crawler", "right", false, log).port(), "http://site.test/"},
		{"socks5 auth demanded", "socks5://127.0.0.1:" + socksServer(t, bAddr, "crawler", "right", false, log).port(), "http://site.test/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := proxiedFetcher(t, tc.proxy)
			_, err := f.Fetch(context.Background(), Request{URL: tc.url})
			fe := fetchErr(t, err, StatusConnectFailed, true)
			if strings.Contains(fe.Error(), "wrong") {
				t.Fatalf("proxy password in error: %v", fe)
			}
		})
	}
	if n := backend.accepted.Load(); n != 0 {
		t.Fatalf("backend reached %d times through failing proxies", n)
	}
}

func TestProxyStillGuardsTargets(t *testing.T) {
	for _, kind := range []string{"http", "socks5"} {
		t.Run(kind, func(t *testing.T) {
			backend := startServer(t, respond(okResp))
			log := &proxyLog{}
			var px *rawServer
			if kind == "http" {
				px = httpProxy(t, "127.0.0.1:"+backend.port(), false, log)
			} else {
				px = socksServer(t, "127.0.0.1:"+backend.port(), "", "", false, log)
			}
			f := proxiedFetcher(t, kind+"://127.0.0.1:"+px.port())
			for _, u := range []string{"http://internal.test/", "https://rebind.test/", "http://127.0.0.1/", "http://[::ffff:10.0.0.1]/", "http://169.254.169.254/latest/meta-data/"} {
				_, err := f.Fetch(context.Background(), Request{URL: u})
				if fe := fetchErr(t, err, StatusConnectFailed, false); !errors.Is(fe, ErrAddressRefused) {
					t.Fatalf("%s: %v", u, fe)
				}
			}
			if n := px.accepted.Load(); n != 0 {
				t.Fatalf("proxy was asked %d times for forbidden targets", n)
			}
		})
	}
}

func TestProxyConfigValidate(t *testing.T) {
	for _, p := range []string{
		"ftp://127.0.0.1:21", "http://127.0.0.1", "socks5://:1080", "http://127.0.0.1:0",
		"http://127.0.0.1:99999", "http://user:pw@127.0.0.1:3128", "http://127.0.0.1:3128/path",
		"socks5://:secret@127.0.0.1:1080", "http://[::1", "127.0.0.1:3128",
	} {
		err := Config{Proxy: p}.Validate()
		if err == nil {
			t.Errorf("Validate(proxy %q) accepted it", p)
			continue
		}
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), ":pw") {
			t.Errorf("proxy credentials leaked: %v", err)
		}
		f := New(Config{Proxy: p}, publicResolver)
		_, ferr := f.Fetch(context.Background(), Request{URL: "http://site.test/"})
		var fe *Error
		if ferr == nil || errors.As(ferr, &fe) {
			t.Errorf("Fetch with proxy %q: %v, want a plain config error", p, ferr)
		}
		_ = f.Close()
	}
	for _, p := range []string{"", "http://proxy.local:3128", "socks5://u:p@[::1]:1080", "SOCKS5://127.0.0.1:1080/"} {
		if err := (Config{Proxy: p}).Validate(); err != nil {
			t.Errorf("Validate(proxy %q) = %v", p, err)
		}
	}
}
