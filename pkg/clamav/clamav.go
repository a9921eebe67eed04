// Package clamav is a small client for clamd's INSTREAM protocol, used to
// scan every fetched body before it is written to a WARC.
//
// It speaks the NUL-terminated ("z"-prefixed) commands over TCP or a unix
// socket, one connection per command. Connecting and closing are most of
// the client's own cost of a scan (about 60% in `trawler bench`), but
// IDSESSION sessions kept open between scans were tried and left out: with
// up to 128 sessions open against clamd 1.4.6 (MaxThreads 4), some
// commands were never answered and their scans waited out the 60 s
// timeout, which a connection per scan never did in the same runs.
//
// Bodies longer than clamd's StreamMaxLength are not refused: only their
// head is sent and the Result says so, since clamd would otherwise drop the
// whole stream with "INSTREAM size limit exceeded". clamd does not tell
// its StreamMaxLength, so when it refuses a stream as too long (the
// profile's length is larger than clamd's) the client halves the length it
// sends, scans again and keeps the smaller length for later scans, with a
// warning: every body still gets a verdict on its head, instead of every
// large body being held as if clamd were down.
//
// Failures that mean "clamd could not give a verdict" (connection refused,
// timeout, an ERROR or unparseable reply, a connection closed early) are
// retried with a doubling backoff; once the retries are spent Scan returns
// an error wrapping ErrUnavailable so the caller applies the profile's
// on-unavailable choice. A body is never reported clean without clamd
// having said "stream: OK".
package clamav

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults applied by New to zero-valued Options fields (Retries excepted).
const (
	DefaultTimeout         = 60 * time.Second
	DefaultRetries         = 2
	DefaultRetryDelay      = 200 * time.Millisecond
	DefaultStreamMaxLength = 100 << 20 // clamd's own default, "100M"
	DefaultChunkSize       = 64 << 10
	// MinStreamLength is the shortest head the client lowers its stream
	// length to when clamd refuses streams as too long.
	MinStreamLength = 64 << 10
)

// ErrUnavailable is returned, wrapped with the last cause, when clamd gave
// no verdict after every attempt (or, for Ping and Version, after the one
// attempt).
var ErrUnavailable = errors.New("clamav: clamd unavailable")

// ErrSizeLimit marks clamd's "INSTREAM size limit exceeded" reply. It means
// Options.StreamMaxLength is larger than clamd's StreamMaxLength, a
// configuration mismatch: the client lowers the length it sends (see the
// package comment) and returns it, wrapped together with ErrUnavailable,
// only when clamd refuses even MinStreamLength bytes.
var ErrSizeLimit = errors.New("clamav: clamd StreamMaxLength is smaller than Options.StreamMaxLength")

// Options configure a Client. Zero values take the defaults above.
type Options struct {
	// Address of clamd: "tcp://host:port", "host:port" or
	// "unix:///path/clamd.sock".
	Address string
	// Timeout bounds one attempt, from connect to the final reply.
	Timeout time.Duration
	// Retries is how many more attempts follow a failed one. Unlike the
	// other fields, zero means no retries (so a profile's "retries: 0" is
	// honoured); DefaultRetries is the profile default.
	Retries int
	// RetryDelay is the backoff before the first retry, doubled for each
	// one after up to a minute. Waits end early when ctx does.
	RetryDelay time.Duration
	// StreamMaxLength must not exceed clamd's StreamMaxLength. Only the
	// first StreamMaxLength bytes of a body are sent.
	StreamMaxLength int64
	// ChunkSize is the size of the INSTREAM chunks.
	ChunkSize int
	// Registerer receives the client's metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// Logger receives retry warnings; nil discards them.
	Logger *slog.Logger
}

// Result is clamd's verdict on one body.
type Result struct {
	// Infected is true when clamd found a signature.
	Infected bool
	// Signature is the name clamd reported, e.g.
	// "Eicar-Test-Signature" (empty when clean).
	Signature string
	// Reply is clamd's exact reply without its terminator, e.g.
	// "stream: Eicar-Test-Signature FOUND": the crawl-log annotation.
	Reply string
	// Truncated is true when the body was longer than StreamMaxLength and
	// only its head was scanned.
	Truncated bool
	// Bytes is how many bytes were sent to clamd.
	Bytes int64
	// Duration is the wall time of the whole Scan call, retries included.
	Duration time.Duration
}

// Client talks to one clamd. It is safe for concurrent use; every command
// uses its own connection.
type Client struct {
	network, addr string
	timeout       time.Duration
	retries       int
	retryDelay    time.Duration
	maxLen        int64
	// limit is the length actually sent: maxLen, or less once clamd has
	// refused a stream as too long.
	limit  atomic.Int64
	chunk  int
	log    *slog.Logger
	m      *metrics
	dialer net.Dialer
}

// New validates o and returns a Client. It does not contact clamd; call
// Ping for that.
func New(o Options) (*Client, error) {
	network, addr, err := ParseAddress(o.Address)
	if err != nil {
		return nil, err
	}
	c := &Client{
		network: network, addr: addr,
		timeout: o.Timeout, retries: o.Retries, retryDelay: o.RetryDelay,
		maxLen: o.StreamMaxLength, chunk: o.ChunkSize, log: o.Logger,
	}
	if err := c.applyDefaults(); err != nil {
		return nil, err
	}
	c.limit.Store(c.maxLen)
	if c.m, err = newMetrics(o.Registerer); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) applyDefaults() error {
	switch {
	case c.retries < 0:
		return fmt.Errorf("clamav options: Retries %d: must not be negative", c.retries)
	case c.timeout < 0:
		return fmt.Errorf("clamav options: Timeout %v: must not be negative", c.timeout)
	case c.retryDelay < 0:
		return fmt.Errorf("clamav options: RetryDelay %v: must not be negative", c.retryDelay)
	case c.maxLen < 0:
		return fmt.Errorf("clamav options: StreamMaxLength %d: must not be negative", c.maxLen)
	case c.chunk < 0:
		return fmt.Errorf("clamav options: ChunkSize %d: must not be negative", c.chunk)
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.retryDelay == 0 {
		c.retryDelay = DefaultRetryDelay
	}
	if c.maxLen == 0 {
		c.maxLen = DefaultStreamMaxLength
	}
	if c.chunk == 0 {
		c.chunk = DefaultChunkSize
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return nil
}

// ParseAddress splits a clamd address into a net.Dial network and address.
// Accepted forms: "tcp://host:port", "host:port", "unix:///abs/path".
func ParseAddress(s string) (network, addr string, err error) {
	if s == "" {
		return "", "", errors.New("clamav address: empty")
	}
	if !strings.Contains(s, "://") {
		return tcpAddress(s, s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", "", fmt.Errorf("clamav address %q: %w", s, err)
	}
	switch u.Scheme {
	case "tcp":
		if u.Path != "" || u.RawQuery != "" || u.User != nil {
			return "", "", fmt.Errorf("clamav address %q: tcp address takes only host:port", s)
		}
		return tcpAddress(s, u.Host)
	case "unix":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return "", "", fmt.Errorf("clamav address %q: unix address must be unix:///absolute/path", s)
		}
		return "unix", u.Path, nil
	default:
		return "", "", fmt.Errorf("clamav address %q: scheme %q is not tcp or unix", s, u.Scheme)
	}
}

func tcpAddress(orig, hostport string) (string, string, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", "", fmt.Errorf("clamav address %q: %w", orig, err)
	}
	if host == "" || port == "" {
		return "", "", fmt.Errorf("clamav address %q: need both host and port", orig)
	}
	return "tcp", hostport, nil
}

// Scan streams a body to clamd and returns its verdict. open is called once
// per attempt and must return a reader positioned at the start of the body
// (the worker passes its spool's NewReader); Scan closes what it returns.
// Only the first StreamMaxLength bytes are read, plus one to learn whether
// the body was longer.
//
// Errors: after the retries, an error wrapping ErrUnavailable and the last
// cause; ctx's error if ctx ends first; an error from open or from reading
// the body as-is (not retried, since clamd is not at fault). No error means
// clamd answered "stream: OK" or "FOUND".
func (c *Client) Scan(ctx context.Context, open func() (io.ReadCloser, error)) (Result, error) {
	start := time.Now()
	res, err := c.scanRetrying(ctx, open)
	res.Duration = time.Since(start)
	c.m.observe(res, err)
	return res, err
}

func (c *Client) scanRetrying(ctx context.Context, open func() (io.ReadCloser, error)) (Result, error) {
	var last error
	for attempt := 0; ; attempt++ {
		res, err := c.scanOnce(ctx, open)
		if err == nil {
			return res, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Result{}, fmt.Errorf("clamav scan: %w", ctxErr)
		}
		var le *localError
		if errors.As(err, &le) {
			return Result{}, le.err
		}
		last = err
		var refused *refusedError
		if errors.As(err, &refused) && c.lowerLimit(ctx, refused.used, err) {
			attempt-- // clamd answered: not a failed attempt
			continue
		}
		if errors.Is(err, ErrSizeLimit) || attempt >= c.retries {
			return Result{}, fmt.Errorf("%w after %d attempt(s): %w", ErrUnavailable, attempt+1, last)
		}
		delay := c.backoff(attempt)
		c.log.WarnContext(ctx, "clamd scan failed, retrying", "addr", c.addr, "attempt", attempt+1, "delay", delay, "err", err)
		c.m.retries.Inc()
		if err := wait(ctx, delay); err != nil {
			return Result{}, fmt.Errorf("clamav scan: %w (last clamd error: %v)", err, last)
		}
	}
}

// lowerLimit lowers the stream length after clamd refused a stream of used
// bytes as too long, and says whether to scan again: when another scan
// has lowered it below used already, or it could be halved (not below
// MinStreamLength). Scans refused together thus halve it once between
// them, each retrying at whatever length is current.
func (c *Client) lowerLimit(ctx context.Context, used int64, cause error) bool {
	if c.limit.Load() < used {
		return true
	}
	if used <= MinStreamLength {
		return false
	}
	next := max(used/2, MinStreamLength)
	if c.limit.CompareAndSwap(used, next) {
		c.log.WarnContext(ctx, "clamd refused a stream as too long: its StreamMaxLength is below the configured scan length; "+
			"scanning only the head of longer bodies (annotated clamav:partial)",
			"addr", c.addr, "configured", c.maxLen, "now", next, "err", cause)
	}
	return true
}

// StreamLength is how many bytes of a body the client sends: the
// configured StreamMaxLength, or less once clamd refused longer streams.
func (c *Client) StreamLength() int64 { return c.limit.Load() }

// maxBackoff caps the doubling so many retries cannot overflow the delay.
const maxBackoff = time.Minute

// backoff is RetryDelay doubled attempt times, capped at maxBackoff (or
// RetryDelay itself when that is larger).
func (c *Client) backoff(attempt int) time.Duration {
	d := c.retryDelay
	for range attempt {
		if d >= maxBackoff {
			break
		}
		d *= 2
	}
	return d
}

// wait blocks for d or until ctx ends, whichever is first.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Ping checks that clamd answers PONG. It makes one attempt.
func (c *Client) Ping(ctx context.Context) error {
	reply, err := c.command(ctx, "zPING\x00")
	if err != nil {
		return err
	}
	if reply != "PONG" {
		return fmt.Errorf("%w: ping %s: unexpected reply %q", ErrUnavailable, c.addr, reply)
	}
	return nil
}

// Version returns clamd's VERSION reply, e.g. "ClamAV 1.4.6/27500/...". It
// makes one attempt.
func (c *Client) Version(ctx context.Context) (string, error) {
	reply, err := c.command(ctx, "zVERSION\x00")
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(reply, "ClamAV ") {
		return "", fmt.Errorf("%w: version %s: unexpected reply %q", ErrUnavailable, c.addr, reply)
	}
	return reply, nil
}
