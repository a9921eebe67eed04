package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
)

// Heritrix fetch status codes for failures (ARCHITECTURE.md 4.3).
//
// This is the one place the mapping from failure to status and Retriable
// flag is written down (TestStatusMapping checks every row):
//
//	failure                                              status  retriable
//	URL unparseable, unsupported scheme, user info,
//	  bad port, non-ASCII host, bad header name/value,
//	  unsupported method, body on GET/HEAD                  -7    no
//	host name does not exist / resolves to nothing          -6    no
//	DNS timeout or temporary failure                        -6    yes
//	address guard refused every address (or the dial)       -2    no
//	TCP connect refused/unreachable, TLS handshake failed   -2    yes
//	proxy unreachable, CONNECT refused, SOCKS5 failure      -2    yes
//	timeout connecting (direct, TLS or via the proxy)       -4    yes
//	read timeout, or total timeout before the headers       -4    yes
//	request could not be written                            -3    yes
//	connection reset or closed in headers or body           -3    yes
//	malformed HTTP, headers over 1 MiB or maxLengthBytes    -3    no
//	closed without sending a single byte                  -404    no
//
// HTTP/2 failures map onto the same rows; h2errors.go lists them.
//
// Not failures: a body cut by maxLengthBytes or by the total timeout after
// the headers is a Response annotated lenTrunc or timeTrunc; cancelling
// ctx returns a plain error wrapping ctx's cause (the URI goes back to the
// frontier uncharged); a local spool failure or unusable Proxy setting is a
// plain error.
const (
	// StatusConnectFailed: the TCP connection or TLS handshake failed, or the
	// address guard refused every address of the host.
	StatusConnectFailed = -2
	// StatusConnectionBroken: the connection failed after it was established
	// (reset, early close, malformed or oversized response headers).
	StatusConnectionBroken = -3
	// StatusTimeout: connect, read or whole-fetch timeout before a usable
	// response arrived.
	StatusTimeout = -4
	// StatusDomainLookupFailed: the host name did not resolve.
	StatusDomainLookupFailed = -6
	// StatusIllegalURI: the URL or a request header cannot be sent.
	StatusIllegalURI = -7
	// StatusEmptyResponse: the server closed the connection without sending
	// a single byte.
	StatusEmptyResponse = -404
)

// Annotations added to a Response, as Heritrix writes them.
const (
	AnnotationLenTrunc  = "lenTrunc"
	AnnotationTimeTrunc = "timeTrunc"
)

// ErrAddressRefused marks a fetch refused by the address guard: the host
// resolved to (or the dial reached) a loopback, private, link-local,
// metadata or otherwise non-public address while Config.AllowPrivate is
// false. It is reported as StatusConnectFailed and is not retriable.
var ErrAddressRefused = errors.New("address refused by guard")

// Error is a failed fetch with its Heritrix status code. Retriable says
// whether the frontier should schedule another attempt.
type Error struct {
	Status    int
	Retriable bool
	Err       error
}

func (e *Error) Error() string {
	return fmt.Sprintf("fetch status %d: %v", e.Status, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// errLengthLimit is returned by the recording reader once MaxLengthBytes
// have been read; it becomes the lenTrunc annotation.
var errLengthLimit = errors.New("maxLengthBytes reached")

// errHeaderLimit is returned by the recording reader while headers are still
// incomplete after maxHeaderBytes.
var errHeaderLimit = errors.New("response headers too long")

func failure(status int, retriable bool, format string, args ...any) *Error {
	return &Error{Status: status, Retriable: retriable, Err: fmt.Errorf(format, args...)}
}

// isTimeout reports whether err is a deadline expiry on a connection or
// context.
func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isPeerClose reports whether err means the peer closed or reset the
// connection, which on a reused keep-alive connection just means it went
// stale.
func isPeerClose(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED)
}
