package fetch

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/testwait"
)

// selfSigned returns a throwaway certificate for a name the client never
// trusts; the fetcher must accept it anyway.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "wrong-name.invalid"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(-time.Minute), // expired, too
		DNSNames:     []string{"wrong-name.invalid"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func TestHTTPSRecordsPlaintext(t *testing.T) {
	cert := selfSigned(t)
	sni := make(chan string, 1)
	const resp = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nsafe\r\n0\r\n\r\n"
	srv := startServer(t, func(ss *session) {
		tc := tls.Server(ss.conn, &tls.Config{
			Certificates: []tls.Certificate{cert},
			GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
				sni <- h.ServerName
				return nil, nil
			},
		})
		ss.conn = tc
		ss.br.Reset(tc)
		respond(resp)(ss)
	})
	f := newFetcher(t, Config{AllowPrivate: true})
	r := fetchOK(t, f, "https://site.test:"+srv.port()+"/secure", nil)
	if got := string(readAll(t, r.Raw)); got != resp {
		t.Fatalf("raw %q", got)
	}
	if got := string(readAll(t, r.Payload)); got != "safe" {
		t.Fatalf("payload %q", got)
	}
	if !strings.HasPrefix(string(r.RequestBytes), "GET /secure HTTP/1.0\r\nHost: site.test:"+srv.port()+"\r\n") {
		t.Fatalf("request %q", r.RequestBytes)
	}
	if got := <-sni; got != "site.test" {
		t.Fatalf("SNI %q, want site.test", got)
	}
}

func TestTLSHandshakeFailure(t *testing.T) {
	// A plain-HTTP server on an https URL: the handshake fails.
	srv := startServer(t, func(ss *session) {
		_ = ss.write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))
		ss.waitClosed()
	})
	f := newFetcher(t, Config{AllowPrivate: true})
	_, err := f.Fetch(context.Background(), Request{URL: "https://site.test:" + srv.port() + "/"})
	fetchErr(t, err, StatusConnectFailed, true)
}

// keepAliveServer answers every request on a connection with a small
// HTTP/1.1 response, closing after maxPerConn responses.
func keepAliveServer(t *testing.T, maxPerConn int) *rawServer {
	return startServer(t, func(ss *session) {
		for i := 0; i < maxPerConn; i++ {
			if _, err := ss.readRequest(); err != nil {
				return
			}
			if ss.write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc")) != nil {
				return
			}
		}
	})
}

func TestKeepAliveReusesConnection(t *testing.T) {
	srv := keepAliveServer(t, 100)
	f := newFetcher(t, Config{AllowPrivate: true, KeepAlive: true})
	url := "http://site.test:" + srv.port() + "/"
	for i := 0; i < 3; i++ {
		r := fetchOK(t, f, url, nil)
		if !strings.HasPrefix(string(r.RequestBytes), "GET / HTTP/1.1\r\n") || strings.Contains(string(r.RequestBytes), "Connection:") {
			t.Fatalf("keep-alive request %q", r.RequestBytes)
		}
		if got := string(readAll(t, r.Raw)); got != "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc" {
			t.Fatalf("raw %q", got)
		}
	}
	if n := srv.accepted.Load(); n != 1 {
		t.Fatalf("%d connections for 3 keep-alive fetches, want 1", n)
	}
}

// TestKeepAlivePoolKeepsParallelConnections fetches one host from 8
// goroutines at once, twice: the server answers nothing in a round until
// all 8 requests of it have arrived, so each round needs 8 connections.
// The second round reuses as many as the host may keep idle.
func TestKeepAlivePoolKeepsParallelConnections(t *testing.T) {
	const parallel = 8
	for _, tc := range []struct {
		perHost      int
		wantAccepted int32
	}{
		{0, parallel + parallel - DefaultMaxIdlePerHost},
		{parallel, parallel},
	} {
		t.Run(strconv.Itoa(tc.perHost), func(t *testing.T) {
			var mu sync.Mutex
			arrived := sync.NewCond(&mu)
			requests := 0
			srv := startServer(t, func(ss *session) {
				for {
					if _, err := ss.readRequest(); err != nil {
						return
					}
					mu.Lock()
					requests++
					round := (requests + parallel - 1) / parallel
					arrived.Broadcast()
					for requests < round*parallel {
						arrived.Wait()
					}
					mu.Unlock()
					if ss.write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc")) != nil {
						return
					}
				}
			})
			f := newFetcher(t, Config{AllowPrivate: true, KeepAlive: true, MaxIdlePerHost: tc.perHost})
			url := "http://site.test:" + srv.port() + "/"
			for range 2 {
				var wg sync.WaitGroup
				for range parallel {
					wg.Go(func() {
						resp, err := f.Fetch(context.Background(), Request{URL: url})
						if err != nil {
							t.Error(err)
							return
						}
						_ = resp.Close()
					})
				}
				wg.Wait()
			}
			if n := srv.accepted.Load(); n != tc.wantAccepted {
				t.Fatalf("%d connections for 2 rounds of %d parallel fetches, want %d", n, parallel, tc.wantAccepted)
			}
		})
	}
}

func TestKeepAliveRedialsStaleConnection(t *testing.T) {
	srv := keepAliveServer(t, 1) // closes after each response without saying so
	f := newFetcher(t, Config{AllowPrivate: true, KeepAlive: true})
	url := "http://site.test:" + srv.port() + "/"
	fetchOK(t, f, url, nil)
	testwait.Until(t, 5*time.Second, "server to drop the first connection", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.conns) == 0
	})
	r := fetchOK(t, f, url, nil)
	if r.StatusCode != 200 {
		t.Fatalf("status %d", r.StatusCode)
	}
	if n := srv.accepted.Load(); n != 2 {
		t.Fatalf("%d connections, want 2 (one stale, one fresh)", n)
	}
}

func TestConnectionCloseModeDoesNotPool(t *testing.T) {
	srv := keepAliveServer(t, 100)
	f := newFetcher(t, Config{AllowPrivate: true})
	url := "http://site.test:" + srv.port() + "/"
	fetchOK(t, f, url, nil)
	fetchOK(t, f, url, nil)
	if n := srv.accepted.Load(); n != 2 {
		t.Fatalf("%d connections for 2 HTTP/1.0 fetches, want 2", n)
	}
}

// closeCounter is a net.Conn that records whether it was closed.
type closeCounter struct {
	net.Conn
	closed atomic.Bool
}

func (c *closeCounter) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

func TestPoolBounds(t *testing.T) {
	p := newPool(2, 3, time.Hour)
	var conns []*closeCounter
	for i := 0; i < 6; i++ {
		a, b := net.Pipe()
		t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
		conns = append(conns, &closeCounter{Conn: a})
	}
	p.put("k1", conns[0], nil)
	p.put("k1", conns[1], nil)
	p.put("k1", conns[2], nil) // per-host cap 2: closes conns[0]
	p.put("k2", conns[3], nil)
	p.put("k3", conns[4], nil) // total cap 3: closes conns[1], idle longest
	if p.total != 3 {
		t.Fatalf("total %d, want 3", p.total)
	}
	for i, c := range conns[:5] {
		if want := i < 2; c.closed.Load() != want {
			t.Fatalf("conns[%d] closed %v, want %v", i, c.closed.Load(), want)
		}
	}
	if c, _, ok := p.get("k3"); !ok || c != conns[4] {
		t.Fatal("the newest host's connection was not pooled")
	}
	if c, _, ok := p.get("k1"); !ok || c != conns[2] {
		t.Fatal("get did not return the most recent connection")
	}
	if _, _, ok := p.get("k1"); ok {
		t.Fatal("an evicted connection was returned")
	}
	p.put("k4", conns[5], nil)
	p.closeAll()
	if _, _, ok := p.get("k2"); ok || p.total != 0 || !conns[3].closed.Load() || !conns[5].closed.Load() {
		t.Fatal("closeAll left connections")
	}
	a, b := net.Pipe()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	expired := newPool(2, 10, -time.Second) // everything is already stale
	expired.put("k", a, nil)
	if _, _, ok := expired.get("k"); ok {
		t.Fatal("expired connection reused")
	}
}
