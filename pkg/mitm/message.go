package mitm

import (
	"context"
	"io"
	"net/http"
	"strings"
)

// Request is one request the browser sent through the proxy.
type Request struct {
	// Method is the request method, passed through as sent.
	Method string
	// URL is absolute: "http://host[:port]/path?q" for plain proxy requests,
	// "https://host[:port]/path?q" for requests inside an intercepted CONNECT
	// tunnel (authority from the CONNECT line). Default ports are dropped.
	URL string
	// Header holds the headers as the client sent them (including Host),
	// minus hop-by-hop headers.
	Header http.Header
	// Body is the request body, nil if there is none; never longer than
	// Config.MaxBodyBytes.
	Body []byte
}

// Response is what a Handler wants written back to the browser.
type Response struct {
	// StatusCode is the final status, 200..999.
	StatusCode int
	// Header is sent after hop-by-hop headers, Content-Length and
	// Transfer-Encoding are removed: the proxy frames the body itself.
	Header http.Header
	// Body is the entity to send, already transfer-decoded, with the content
	// coding Header declares. It may be nil. If it is an io.Closer the
	// Server closes it once written.
	Body io.Reader
	// BodyLength is the exact length of Body, or -1 if unknown (the body is
	// then sent chunked). A Body shorter than a non-negative BodyLength
	// aborts the client connection, so the client never takes a truncated
	// body for a complete one.
	BodyLength int64
}

// Handler fetches and records one request on the browser's behalf.
// Handle is called concurrently from many goroutines; ctx is cancelled when
// the client disconnects or the Server closes.
type Handler interface {
	Handle(ctx context.Context, r *Request) (*Response, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, r *Request) (*Response, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, r *Request) (*Response, error) { return f(ctx, r) }

// RefusedError is returned by a Handler to refuse a request on policy (an
// excluded site, robots, a forbidden address, a resource cap). The client
// gets 403 with Reason as a text/plain body and in the X-Trawler-Refused
// header, so the render log can tell refusals from fetch failures.
type RefusedError struct {
	Reason string
}

// Error describes the refusal.
func (e *RefusedError) Error() string { return "mitm: request refused: " + e.Reason }

// isHopByHop reports whether the canonical header name describes one
// connection rather than the exchange (RFC 9110 section 7.6.1), so it must
// not cross the proxy.
func isHopByHop(name string) bool {
	switch name {
	case "Connection", "Proxy-Connection", "Proxy-Authorization", "Proxy-Authenticate",
		"Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// stripHopByHop returns a copy of h without hop-by-hop headers, including
// those that the Connection header names.
func stripHopByHop(h http.Header) http.Header {
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	for _, v := range h["Connection"] {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				out.Del(name)
			}
		}
	}
	for name := range out {
		if isHopByHop(http.CanonicalHeaderKey(name)) {
			delete(out, name)
		}
	}
	return out
}

// isUpgrade reports whether the request asks to switch protocols
// (WebSocket and the like), which this proxy cannot record.
func isUpgrade(h http.Header) bool {
	if h.Get("Upgrade") != "" {
		return true
	}
	for _, v := range h["Connection"] {
		for _, name := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(name), "upgrade") {
				return true
			}
		}
	}
	return false
}
