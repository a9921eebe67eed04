package testweb

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Endpoints of hostile.test. Each misbehaves in one way a crawler must
// survive; all of them stop promptly when the Server is closed.
const (
	// PathSlowDrip sends a 200 text/html chunked body of one byte every
	// SlowDripInterval, up to SlowDripMaxBytes (about half an hour).
	PathSlowDrip = "/slow-drip"
	// PathEndless sends a 200 chunked body that never ends.
	PathEndless = "/endless"
	// PathHugeHeaders sends more than HugeHeaderBytes of X-Filler-NNNN
	// response headers before a two-byte body.
	PathHugeHeaders = "/huge-headers"
	// PathBrokenChunked sends a chunked body whose second chunk-size line
	// is not hexadecimal, then closes the connection.
	PathBrokenChunked = "/broken-chunked"
	// PathGzipBomb sends Content-Encoding: gzip with a Content-Length of
	// about 1 MiB that inflates to GzipBombExpandedBytes of zeros (a
	// sequence of gzip members, which multi-member readers concatenate).
	PathGzipBomb = "/gzip-bomb"
	// PathReset announces a Content-Length of ResetDeclaredBytes, sends
	// ResetAfterBytes of it, then aborts the connection with a TCP RST
	// (SO_LINGER 0).
	PathReset = "/reset"
	// PathRedirectLoop answers 302 with the relative Location "b"
	// (PathRedirectLoopB), which answers 302 with "a": a loop a crawler
	// must break by remembering what it already fetched.
	PathRedirectLoop = "/loop/a"
	// PathRedirectLoopB is the other half of the redirect loop.
	PathRedirectLoopB = "/loop/b"
	// PathCalendar is the entry month of an endless calendar: every
	// /calendar/YYYY/MM page links the previous and next month and each of
	// its days, every /calendar/YYYY/MM/DD page its month and the previous
	// and next day. Years run from CalendarMinYear to CalendarMaxYear, far
	// beyond any crawl, so only scope rules (hops, path depth) stop it.
	PathCalendar = "/calendar/2024/01"
	// PathHugeBody sends a 200 application/octet-stream body of
	// HugeBodyBytes with a Content-Length, generated while it streams (see
	// HugeBodyReader for the bytes and the reason for their pattern).
	PathHugeBody = "/huge-body"
	// PathGrowingQuery is the first page of a query that grows for ever:
	// the page at /grow?QUERY links /grow?QUERY&pN=N with N one more than
	// its parameters, so every link is a new URL with a longer query.
	PathGrowingQuery = "/grow?p1=1"
	// PathChallenge always answers with a bot-challenge interstitial as
	// Cloudflare serves one (403, Cf-Mitigated: challenge, "Just a
	// moment..."), never with the page.
	PathChallenge = "/challenged"
)

// The growing query and the challenge are reached by their URLs, not from
// the index, so crawls of the synthetic web keep the shape their tests
// count on; the trap and challenge tests seed them.

// Sizes and rates of the hostile endpoints.
const (
	SlowDripInterval      = 200 * time.Millisecond
	SlowDripMaxBytes      = 9000
	HugeHeaderBytes       = 1 << 20
	GzipBombExpandedBytes = 1 << 30
	ResetDeclaredBytes    = 1 << 20
	ResetAfterBytes       = 64 << 10
	bombMemberBytes       = 1 << 20
	// HugeBodyBytes is the length of the PathHugeBody body: 1 GiB.
	HugeBodyBytes = 1 << 30
	// CalendarMinYear and CalendarMaxYear bound the hostile calendar.
	CalendarMinYear = 1
	CalendarMaxYear = 999_999_999
)

// hostilePaths lists the endpoints in index order.
var hostilePaths = [...]string{
	PathSlowDrip, PathEndless, PathHugeHeaders, PathBrokenChunked, PathGzipBomb, PathReset,
	PathRedirectLoop, PathCalendar, PathHugeBody,
}

// hostileHandler serves hostile.test.
func (srv *Server) hostileHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", srv.hostileIndex)
	mux.HandleFunc("GET /robots.txt", func(w http.ResponseWriter, r *http.Request) {
		writeBody(w, r, http.StatusOK, ctText, []byte("User-agent: *\nDisallow:\n"), false)
	})
	mux.HandleFunc("GET "+PathSlowDrip, srv.slowDrip)
	mux.HandleFunc("GET "+PathEndless, srv.endless)
	mux.HandleFunc("GET "+PathHugeHeaders, hugeHeaders)
	mux.HandleFunc("GET "+PathBrokenChunked, srv.brokenChunked)
	mux.HandleFunc("GET "+PathGzipBomb, srv.gzipBomb)
	mux.HandleFunc("GET "+PathReset, srv.reset)
	mux.HandleFunc("GET /loop/{half}", redirectLoop)
	mux.HandleFunc("GET /calendar/", hostileCalendar)
	mux.HandleFunc("GET "+PathHugeBody, srv.hugeBody)
	mux.HandleFunc("GET /grow", growingQuery)
	mux.HandleFunc("GET "+PathChallenge, challengeInterstitial)
	return mux
}

// hostileIndex links every hostile endpoint.
func (srv *Server) hostileIndex(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><title>hostile.test</title></head><body><ul>\n")
	for _, p := range hostilePaths {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(p), html.EscapeString(p))
	}
	b.WriteString("</ul></body></html>\n")
	writeBody(w, r, http.StatusOK, ctHTML, []byte(b.String()), false)
}

// slowDrip writes one byte per SlowDripInterval until the client leaves,
// the server closes or SlowDripMaxBytes have gone out.
func (srv *Server) slowDrip(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", ctHTML)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return
	}
	t := time.NewTicker(SlowDripInterval)
	defer t.Stop()
	for range SlowDripMaxBytes {
		select {
		case <-srv.done:
			return
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		if _, err := w.Write([]byte{'.'}); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// endless writes a chunked body until the client leaves or the server
// closes.
func (srv *Server) endless(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", ctText)
	w.WriteHeader(http.StatusOK)
	buf := bytes.Repeat([]byte("endless body, never finishes\n"), largeChunk/29)
	for {
		select {
		case <-srv.done:
			return
		case <-r.Context().Done():
			return
		default:
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
	}
}

// hugeHeaders sends more than HugeHeaderBytes of header lines.
func hugeHeaders(w http.ResponseWriter, r *http.Request) {
	value := strings.Repeat("x", 1000)
	for i, total := 0, 0; total <= HugeHeaderBytes; i++ {
		name := fmt.Sprintf("X-Filler-%04d", i)
		w.Header().Set(name, value)
		total += len(name) + len(": ") + len(value) + len("\r\n")
	}
	writeBody(w, r, http.StatusOK, ctText, []byte("ok"), false)
}

// hijack takes over the connection and registers it so Close can end it.
func (srv *Server) hijack(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, bool) {
	c, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		srv.log.Error("testweb hijack", "err", err)
		return nil, nil, false
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.closed {
		_ = c.Close()
		return nil, nil, false
	}
	srv.hijacked[c] = struct{}{}
	return c, rw, true
}

// release forgets and closes a hijacked connection.
func (srv *Server) release(c net.Conn) {
	srv.mu.Lock()
	delete(srv.hijacked, c)
	srv.mu.Unlock()
	_ = c.Close()
}

// brokenChunked writes a valid first chunk, then a chunk-size line that is
// not hexadecimal.
func (srv *Server) brokenChunked(w http.ResponseWriter, _ *http.Request) {
	c, rw, ok := srv.hijack(w)
	if !ok {
		return
	}
	defer srv.release(c)
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
		"10\r\n0123456789abcdef\r\nzz\r\nthis is not a chunk\r\n0\r\n\r\n")
	_ = rw.Flush()
}

// reset sends part of a declared body and aborts with a TCP RST.
func (srv *Server) reset(w http.ResponseWriter, _ *http.Request) {
	c, rw, ok := srv.hijack(w)
	if !ok {
		return
	}
	defer srv.release(c)
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
		strconv.Itoa(ResetDeclaredBytes) + "\r\n\r\n")
	_, _ = rw.Write(bytes.Repeat([]byte{0xA5}, ResetAfterBytes))
	_ = rw.Flush()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // Close now sends RST instead of FIN
	}
}

// gzipBomb sends copies of one gzip member of bombMemberBytes zeros.
func (srv *Server) gzipBomb(w http.ResponseWriter, r *http.Request) {
	member := srv.bomb()
	copies := GzipBombExpandedBytes / bombMemberBytes
	h := w.Header()
	h.Set("Content-Type", ctHTML)
	h.Set("Content-Encoding", "gzip")
	h.Set("Content-Length", strconv.Itoa(len(member)*copies))
	w.WriteHeader(http.StatusOK)
	for range copies {
		select {
		case <-srv.done:
			return
		default:
		}
		if _, err := w.Write(member); err != nil {
			return
		}
	}
}

// gzipBombMember compresses bombMemberBytes zeros into one gzip member.
func gzipBombMember() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // a valid level never errs
	_, _ = zw.Write(make([]byte, bombMemberBytes))
	_ = zw.Close()
	return b.Bytes()
}
