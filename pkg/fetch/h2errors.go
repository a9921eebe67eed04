package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// The HTTP/2 exchange maps its failures to the statuses of the HTTP/1.x
// path (errors.go), so a URI fails the same way whichever protocol the
// server chose:
//
//	failure                                              status  retriable
//	request could not be written                            -3    yes
//	a later frame (SETTINGS or PING ack) could not be sent   -3    yes
//	closed without sending a single byte                  -404    no
//	not HTTP/2 before the response headers (bad frames,
//	  no SETTINGS first, a bad setting, DATA first, bad
//	  :status, push)                                        -3    no
//	header block over 1 MiB or over maxLengthBytes          -3    no
//	RST_STREAM, or GOAWAY before our stream was taken       -3    yes
//	connection reset, closed or bad frames in the body      -3    yes
//	body shorter or longer than its content-length          -3    yes
//	read timeout, or total timeout before the headers       -4    yes

// fail builds a failure of the exchange with its status.
func (x *h2Exchange) fail(status int, retriable bool, what string) error {
	return &Error{Status: status, Retriable: retriable,
		Err: fmt.Errorf("%s %s (after %d response bytes)", what, x.p.req.URL, x.rec.n)}
}

// malformed is a server that does not speak HTTP/2 as RFC 9113 says.
func (x *h2Exchange) malformed(format string, args ...any) error {
	return x.fail(StatusConnectionBroken, false, "malformed HTTP/2 response ("+fmt.Sprintf(format, args...)+") from")
}

// classify maps a failure to its Heritrix status; failures already
// classified, local spool failures and cancellation pass through.
func (x *h2Exchange) classify(err error) error {
	var fe *Error
	var we *writeErr
	switch {
	case errors.As(err, &fe), errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &we):
		return fmt.Errorf("fetch %s: spool raw response: %w", x.p.req.URL, err)
	}
	wrap := func(status int, retriable bool, what string) error {
		return &Error{Status: status, Retriable: retriable,
			Err: fmt.Errorf("%s %s (after %d response bytes): %w", what, x.p.req.URL, x.rec.n, err)}
	}
	switch {
	case errors.Is(err, errHeaderLimit):
		return wrap(StatusConnectionBroken, false, "HTTP/2 response headers over 1 MiB from")
	case errors.Is(err, errLengthLimit):
		return wrap(StatusConnectionBroken, false, "HTTP/2 response headers over maxLengthBytes from")
	case isTimeout(err):
		return wrap(StatusTimeout, true, "timeout reading")
	case !x.wrote:
		return wrap(StatusConnectionBroken, true, "writing request to")
	case errors.As(err, new(*h2SendErr)):
		return wrap(StatusConnectionBroken, true, "connection broken writing HTTP/2 frames to")
	case x.rec.n == 0 && errors.Is(x.rec.err, io.EOF):
		return wrap(StatusEmptyResponse, false, "empty response from")
	case x.head == nil && x.rec.err == nil:
		// The bytes arrived but are not HTTP/2.
		return wrap(StatusConnectionBroken, false, "malformed HTTP/2 response from")
	default:
		return wrap(StatusConnectionBroken, true, "connection broken reading")
	}
}
