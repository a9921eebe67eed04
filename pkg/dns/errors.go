package dns

import (
	"errors"
	"fmt"
	"net"
	"os"
)

// LookupError is a failed lookup. NotFound is NXDOMAIN / no addresses (permanent); otherwise temporary.
type LookupError struct {
	Host string
	// NotFound is true when the name does not exist, has no usable
	// address, or cannot be a DNS name at all: retrying will not help.
	// Otherwise the failure (timeouts, SERVFAIL, garbage replies) is
	// temporary.
	NotFound bool
	Err      error
}

// Error describes the failure with the host name.
func (e *LookupError) Error() string {
	if e.NotFound {
		return fmt.Sprintf("dns lookup %s: not found: %v", e.Host, e.Err)
	}
	return fmt.Sprintf("dns lookup %s: %v", e.Host, e.Err)
}

// Unwrap returns the underlying cause.
func (e *LookupError) Unwrap() error { return e.Err }

// errNoAddresses is the cause when the name exists but has no A or AAAA
// record (or only unusable ones such as 0.0.0.0).
var errNoAddresses = errors.New("no A or AAAA records")

// toNetError converts a Resolve error into the *net.DNSError that callers of
// LookupIPAddr (pkg/fetch) inspect for IsNotFound / IsTemporary. Context
// errors pass through unchanged so cancellation stays recognisable.
func toNetError(host string, err error) error {
	var le *LookupError
	if !errors.As(err, &le) {
		return err
	}
	return &net.DNSError{
		UnwrapErr:   le,
		Err:         le.Err.Error(),
		Name:        host,
		IsNotFound:  le.NotFound,
		IsTemporary: !le.NotFound,
		IsTimeout:   !le.NotFound && errors.Is(le.Err, os.ErrDeadlineExceeded),
	}
}
