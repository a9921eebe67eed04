package fetch

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
)

// readBody reads the Content-Length body that follows a request head.
func (ss *session) readBody(head []byte) ([]byte, error) {
	v, ok := headerOf(head, "Content-Length")
	if !ok {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, err
	}
	body := make([]byte, n)
	_, err = io.ReadFull(ss.br, body)
	return body, err
}

func TestPostSendsBodyExactly(t *testing.T) {
	bodies := make(chan []byte, 1)
	srv := startServer(t, func(ss *session) {
		head, err := ss.readRequest()
		if err != nil {
			return
		}
		body, err := ss.readBody(head)
		if err != nil {
			return
		}
		bodies <- body
		_ = ss.write([]byte("HTTP/1.0 302 Found\r\nLocation: /home\r\n\r\n"))
	})
	f := newFetcher(t, Config{AllowPrivate: true})
	form := []byte("user=alice&pass=s%26cret")
	resp, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/login",
		Method: http.MethodPost, Body: form})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Close() })
	want := "POST /login HTTP/1.0\r\nHost: site.test:" + srv.port() + "\r\n" +
		"User-Agent: trawler-test (+https://example.org/contact)\r\nConnection: close\r\n" +
		"Accept: " + defaultAccept + "\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
		"Content-Length: 24\r\n\r\nuser=alice&pass=s%26cret"
	if string(resp.RequestBytes) != want {
		t.Fatalf("request bytes\n%q\nwant\n%q", resp.RequestBytes, want)
	}
	if got := <-bodies; string(got) != string(form) {
		t.Fatalf("server got body %q", got)
	}
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestPostOwnContentTypeAndEmptyBody(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\n\r\n"))
	f := newFetcher(t, Config{AllowPrivate: true})
	u := "http://site.test:" + srv.port() + "/api"
	r, err := f.Fetch(context.Background(), Request{URL: u, Method: "POST", Body: []byte("{}"),
		Header: http.Header{"Content-Type": {"application/json"}, "Content-Length": {"999"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if ct, _ := headerOf(r.RequestBytes, "Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	if cl, _ := headerOf(r.RequestBytes, "Content-Length"); cl != "2" {
		t.Fatalf("Content-Length %q: the caller's value must not win", cl)
	}
	r2, err := f.Fetch(context.Background(), Request{URL: u, Method: "POST"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r2.Close() })
	if cl, _ := headerOf(r2.RequestBytes, "Content-Length"); cl != "0" {
		t.Fatalf("empty POST Content-Length %q, want 0", cl)
	}
	if _, ok := headerOf(r2.RequestBytes, "Content-Type"); ok {
		t.Fatal("Content-Type sent without a body")
	}
}

func TestHeadReadsNoBody(t *testing.T) {
	// A HEAD response declares a length but sends no body; reading one
	// would hang until the read timeout.
	srv := startServer(t, func(ss *session) {
		if _, err := ss.readRequest(); err != nil {
			return
		}
		_ = ss.write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n"))
		ss.waitClosed()
	})
	f := newFetcher(t, Config{AllowPrivate: true})
	r, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/", Method: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if r.Payload.Size() != 0 || string(r.RequestBytes[:5]) != "HEAD " {
		t.Fatalf("payload %d bytes, request %q", r.Payload.Size(), r.RequestBytes)
	}
}

func TestBadMethodOrBody(t *testing.T) {
	f := newFetcher(t, Config{AllowPrivate: true})
	for _, req := range []Request{
		{URL: "http://site.test/", Method: "PUT"},
		{URL: "http://site.test/", Method: "get"},
		{URL: "http://site.test/", Method: "GET\r\nX: 1"},
		{URL: "http://site.test/", Body: []byte("x")},
		{URL: "http://site.test/", Method: "HEAD", Body: []byte("x")},
	} {
		_, err := f.Fetch(context.Background(), req)
		fetchErr(t, err, StatusIllegalURI, false)
	}
}

func TestPostNeverUsesPooledConnection(t *testing.T) {
	srv := keepAliveServer(t, 100)
	f := newFetcher(t, Config{AllowPrivate: true, KeepAlive: true})
	u := "http://site.test:" + srv.port() + "/"
	for _, req := range []Request{{URL: u}, {URL: u}, {URL: u, Method: "POST", Body: []byte("a=1")}, {URL: u}} {
		r, err := f.Fetch(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Close()
	}
	// GET, GET (reused), POST (fresh dial), GET (reuses one of the two).
	if n := srv.accepted.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}
