package clamav

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// maxReply bounds how much of a reply is read, so a peer that is not clamd
// cannot make the client buffer without limit.
const maxReply = 4096

// localError marks a failure on our side (opening or reading the body):
// clamd is not at fault, so it is neither retried nor reported as
// ErrUnavailable.
type localError struct{ err error }

func (e *localError) Error() string { return e.err.Error() }
func (e *localError) Unwrap() error { return e.err }

// session is one connection to clamd, with its deadline and context
// cancellation wired to the socket.
type session struct {
	conn net.Conn
	stop func() bool
}

// connect dials clamd and arms the per-attempt deadline. Cancelling ctx
// moves the deadline to the past, which unblocks any read or write at once.
func (c *Client) connect(ctx context.Context) (*session, error) {
	dctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	conn, err := c.dialer.DialContext(dctx, c.network, c.addr)
	if err != nil {
		return nil, fmt.Errorf("clamd %s: %w", c.addr, err)
	}
	if err := conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("clamd %s: set deadline: %w", c.addr, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	return &session{conn: conn, stop: stop}, nil
}

func (s *session) close() {
	s.stop()
	_ = s.conn.Close()
}

// command sends a one-line z-command and returns its reply. Failures wrap
// ErrUnavailable.
func (c *Client) command(ctx context.Context, cmd string) (string, error) {
	name := strings.Trim(cmd, "z\x00")
	s, err := c.connect(ctx)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrUnavailable, name, c.ctxOr(ctx, err))
	}
	defer s.close()
	if _, err := io.WriteString(s.conn, cmd); err != nil {
		return "", fmt.Errorf("%w: %s: clamd %s: write: %w", ErrUnavailable, name, c.addr, c.ctxOr(ctx, err))
	}
	reply, err := readReply(s.conn)
	if err != nil {
		return "", fmt.Errorf("%w: %s: clamd %s: %w", ErrUnavailable, name, c.addr, c.ctxOr(ctx, err))
	}
	return reply, nil
}

// ctxOr prefers ctx's error over the socket error it caused, so callers
// can test for context.Canceled.
func (c *Client) ctxOr(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%w (%v)", ctxErr, err)
	}
	return err
}

// scanOnce is one INSTREAM attempt on a fresh connection.
func (c *Client) scanOnce(ctx context.Context, open func() (io.ReadCloser, error)) (Result, error) {
	limit := c.limit.Load()
	res, err := c.scanAt(ctx, open, limit)
	if errors.Is(err, ErrSizeLimit) {
		err = &refusedError{used: limit, err: err}
	}
	return res, err
}

// refusedError is clamd refusing a stream of used bytes as too long.
type refusedError struct {
	used int64
	err  error
}

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// scanAt scans the first limit bytes of the body.
func (c *Client) scanAt(ctx context.Context, open func() (io.ReadCloser, error), limit int64) (Result, error) {
	body, err := open()
	if err != nil {
		return Result{}, &localError{fmt.Errorf("clamav scan: open body: %w", err)}
	}
	defer body.Close()
	s, err := c.connect(ctx)
	if err != nil {
		return Result{}, err
	}
	defer s.close()
	if _, err := io.WriteString(s.conn, "zINSTREAM\x00"); err != nil {
		return Result{}, fmt.Errorf("clamd %s: write INSTREAM: %w", c.addr, err)
	}
	sent, truncated, werr := c.stream(s.conn, body, limit)
	var le *localError
	if errors.As(werr, &le) {
		return Result{}, werr
	}
	reply, rerr := readReply(s.conn)
	if werr != nil {
		// clamd may have answered and closed while we were still sending
		// (a size-limit or internal error): its reply says more than EPIPE.
		if rerr == nil {
			if _, perr := parseReply(reply); perr != nil {
				return Result{}, fmt.Errorf("clamd %s: %w", c.addr, perr)
			}
		}
		return Result{}, fmt.Errorf("clamd %s: send body: %w", c.addr, werr)
	}
	if rerr != nil {
		return Result{}, fmt.Errorf("clamd %s: %w", c.addr, rerr)
	}
	res, err := parseReply(reply)
	if err != nil {
		return Result{}, fmt.Errorf("clamd %s: %w", c.addr, err)
	}
	res.Truncated, res.Bytes = truncated, sent
	return res, nil
}

// stream sends up to limit bytes of body as length-prefixed chunks and the
// terminating empty chunk. Body read errors come back as *localError.
func (c *Client) stream(w io.Writer, body io.Reader, limit int64) (sent int64, truncated bool, err error) {
	buf := make([]byte, 4+c.chunk)
	head := io.LimitReader(body, limit)
	for {
		n, rerr := io.ReadFull(head, buf[4:])
		if n > 0 {
			binary.BigEndian.PutUint32(buf[:4], uint32(n))
			if _, err := w.Write(buf[:4+n]); err != nil {
				return sent, false, err
			}
			sent += int64(n)
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			return sent, false, &localError{fmt.Errorf("clamav scan: read body at byte %d: %w", sent, rerr)}
		}
	}
	if sent == limit {
		var one [1]byte
		n, rerr := io.ReadFull(body, one[:])
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return sent, false, &localError{fmt.Errorf("clamav scan: read body at byte %d: %w", sent, rerr)}
		}
		truncated = n == 1
	}
	if _, err := w.Write([]byte{0, 0, 0, 0}); err != nil {
		return sent, truncated, err
	}
	return sent, truncated, nil
}

// readReply reads one NUL-terminated reply.
func readReply(r io.Reader) (string, error) {
	var buf []byte
	var tmp [512]byte
	for {
		n, err := r.Read(tmp[:])
		buf = append(buf, tmp[:n]...)
		if i := bytes.IndexByte(buf, 0); i >= 0 {
			return string(buf[:i]), nil
		}
		if len(buf) > maxReply {
			return "", fmt.Errorf("reply longer than %d bytes without terminator, starting %q", maxReply, buf[:64])
		}
		if errors.Is(err, io.EOF) {
			if len(buf) == 0 {
				return "", errors.New("connection closed before any reply")
			}
			return "", fmt.Errorf("connection closed inside reply %q (no NUL terminator)", buf)
		}
		if err != nil {
			return "", fmt.Errorf("read reply: %w", err)
		}
	}
}

// parseReply turns an INSTREAM reply into a Result. Anything but
// "stream: OK" and "stream: <sig> FOUND" is an error.
func parseReply(reply string) (Result, error) {
	switch {
	case reply == "stream: OK":
		return Result{Reply: reply}, nil
	case strings.HasSuffix(reply, " ERROR"):
		if strings.Contains(reply, "size limit exceeded") {
			return Result{}, fmt.Errorf("%w: reply %q", ErrSizeLimit, reply)
		}
		return Result{}, fmt.Errorf("error reply %q", reply)
	case strings.HasPrefix(reply, "stream: ") && strings.HasSuffix(reply, " FOUND"):
		sig := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(reply, "stream: "), " FOUND"))
		if sig != "" {
			return Result{Infected: true, Signature: sig, Reply: reply}, nil
		}
	}
	return Result{}, fmt.Errorf("unexpected reply %q", reply)
}
