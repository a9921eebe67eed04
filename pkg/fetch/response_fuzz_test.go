package fetch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fuzzServer is one loopback listener reused by every exec of a fuzz
// target: a request for /N is answered with the bytes registered as N,
// then the connection is closed.
type fuzzServer struct {
	ln    net.Listener
	wg    sync.WaitGroup
	next  atomic.Int64
	resps sync.Map // string(N) -> []byte
}

func startFuzzServer(f *testing.F) *fuzzServer {
	f.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	s := &fuzzServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() { s.serve(c) })
		}
	})
	f.Cleanup(func() {
		_ = ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *fuzzServer) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if l == "\r\n" {
			break
		}
	}
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return
	}
	id := strings.TrimPrefix(fields[1], "/")
	resp, ok := s.resps.Load(id)
	if !ok {
		return
	}
	_, _ = c.Write(resp.([]byte))
}

// register returns the URL path under which resp will be served.
func (s *fuzzServer) register(resp []byte) (path string, done func()) {
	id := strconv.FormatInt(s.next.Add(1), 10)
	s.resps.Store(id, resp)
	return "/" + id, func() { s.resps.Delete(id) }
}

// FuzzResponse drives a Fetcher against a server that answers with the
// fuzzed bytes: status line, headers, chunked or length-framed or
// read-to-close bodies, interim responses. A fetch finishes quickly (the
// server closes after writing), never panics, and fails only with a
// Heritrix status (*Error). A response it returns is what was received
// (Raw a prefix of the bytes sent), with a payload no longer than Raw and
// a payload digest over exactly the payload.
func FuzzResponse(f *testing.F) {
	for _, resp := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nContent-Type: Text/Plain\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n",
		"HTTP/1.0 404 Not Found\r\nServer: old\r\n\r\nno length here",
		"HTTP/1.1 204 No Content\r\nContent-Type: ;\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 301 Moved\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.0 200 OK\nContent-Type: image/gif\n\nGIF89a",
		"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nx",
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Ty",
		"HTTP/1.1 99999 Big\r\n\r\n",
		"ICY 200 OK\r\n\r\nstream",
		"",
	} {
		f.Add([]byte(resp), false)
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), true)
	srv := startFuzzServer(f)
	port := strconv.Itoa(srv.ln.Addr().(*net.TCPAddr).Port)
	cfg := Config{AllowPrivate: true, ConnectTimeout: time.Second, ReadTimeout: time.Second,
		TotalTimeout: 3 * time.Second, MaxLengthBytes: 32 << 10, SpoolThreshold: 1 << 10, SpoolDir: f.TempDir()}
	plain := New(cfg, staticResolver{"fuzz.test": {"127.0.0.1"}})
	cfg.KeepAlive = true
	keep := New(cfg, staticResolver{"fuzz.test": {"127.0.0.1"}})
	f.Cleanup(func() { _ = plain.Close(); _ = keep.Close() })
	f.Fuzz(func(t *testing.T, resp []byte, keepAlive bool) {
		path, done := srv.register(resp)
		defer done()
		fe := plain
		if keepAlive {
			fe = keep
		}
		start := time.Now()
		r, err := fe.Fetch(context.Background(), Request{URL: "http://fuzz.test:" + port + path, AcceptCompression: true})
		if took := time.Since(start); took > 8*time.Second {
			t.Fatalf("fetch took %v", took)
		}
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.Status >= 0 {
				t.Fatalf("fetch error %v (%T) is not an *Error with a Heritrix status", err, err)
			}
			return
		}
		defer r.Close()
		raw, err := io.ReadAll(r.Raw.NewReader())
		if err != nil {
			t.Fatal(err)
		}
		payload, err := io.ReadAll(r.Payload.NewReader())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(resp, raw) {
			t.Fatalf("raw %q is not a prefix of what was sent, %q", raw, resp)
		}
		if len(payload) > len(raw) {
			t.Fatalf("payload of %d bytes from a raw response of %d", len(payload), len(raw))
		}
		if r.StatusCode < 100 || r.StatusCode > 999 {
			t.Fatalf("status %d", r.StatusCode)
		}
		sum := sha1.Sum(payload)
		if want := "sha1:" + base32.StdEncoding.EncodeToString(sum[:]); r.PayloadDigest != want {
			t.Fatalf("payload digest %s, want %s", r.PayloadDigest, want)
		}
		if r.MIME == "" || r.MIME != strings.ToLower(r.MIME) {
			t.Fatalf("MIME %q", r.MIME)
		}
		_ = fmt.Sprint(r.Annotations)
	})
}
