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
