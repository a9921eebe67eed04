package clamav

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Scans run in clamd sessions (IDSESSION): one connection carries many
// INSTREAM commands, one at a time, each reply prefixed with the command's
// number in the session. A connection per scan cost the client more than
// sending the body (connect and close were about 60% of its scan time in
// `trawler bench`), and clamd an accept for each.
const (
	// DefaultMaxIdleSessions is Options.MaxIdleSessions when unset.
	DefaultMaxIdleSessions = 32
	// sessionIdle is how long a session may wait for its next command.
	// clamd ends a session that sends nothing for ReadTimeout (120 s by
	// default), counted from the end of the previous body, and says
	// "COMMAND READ TIMED OUT". A session is also checked for that, or for
	// having been closed, before each reuse.
	sessionIdle = 30 * time.Second
)

// session is one connection to clamd, with its deadline and context
// cancellation wired to the socket. In IDSESSION mode n counts the
// commands sent on it.
type session struct {
	conn   net.Conn
	stop   func() bool
	n      int
	reused bool
	idle   time.Time
	// spent marks a session that must not be reused: clamd sent more than
	// the reply.
	spent bool
}

// arm sets the per-attempt deadline and wires ctx's cancellation to it.
func (s *session) arm(ctx context.Context, timeout time.Duration) error {
	if err := s.conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	s.stop = context.AfterFunc(ctx, func() { _ = s.conn.SetDeadline(time.Unix(1, 0)) })
	return nil
}

// disarm undoes arm; it reports false when ctx already fired, which leaves
// the connection with a deadline in the past.
func (s *session) disarm() bool {
	if s.stop == nil {
		return true
	}
	ok := s.stop()
	s.stop = nil
	return ok && s.conn.SetDeadline(time.Time{}) == nil
}

func (s *session) close() {
	s.disarm()
	_ = s.conn.Close()
}

// end says goodbye to clamd, best effort, and closes the connection.
func (s *session) end() {
	_ = s.conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = io.WriteString(s.conn, "zEND\x00")
	_ = s.conn.Close()
}

// sessions is the pool of idle sessions, most recently used last.
type sessions struct {
	mu     sync.Mutex
	idle   []*session
	max    int
	closed bool
}

// get returns an idle session that has not waited too long and that clamd
// has neither closed nor written to since its last reply, or nil.
func (p *sessions) get() *session {
	for {
		p.mu.Lock()
		if len(p.idle) == 0 {
			p.mu.Unlock()
			return nil
		}
		s := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		p.mu.Unlock()
		if time.Since(s.idle) < sessionIdle && quiet(s.conn) {
			return s
		}
		go s.end() // clamd may be gone; do not make the scan wait
	}
}

// put keeps s for the next scan, ending the oldest session when full.
func (p *sessions) put(s *session) {
	s.idle, s.reused = time.Now(), true
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		go s.end()
		return
	}
	if len(p.idle) >= p.max {
		go p.idle[0].end()
		p.idle = p.idle[1:]
	}
	p.idle = append(p.idle, s)
}

// quiet reports whether nothing is waiting to be read on conn: no data
// (clamd's "COMMAND READ TIMED OUT") and no end of stream. It peeks without
// blocking; a connection it cannot peek at counts as quiet.
func quiet(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var n int
	var perr error
	var b [1]byte
	if err := rc.Read(func(fd uintptr) bool {
		n, _, perr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	}); err != nil {
		return false
	}
	return n <= 0 && (errors.Is(perr, syscall.EAGAIN) || errors.Is(perr, syscall.EWOULDBLOCK))
}

// closeAll ends every idle session and refuses new ones.
func (p *sessions) closeAll() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, s := range idle {
		s.end()
	}
}

// Close ends the idle clamd sessions. Scans after Close still work, each
// on a connection of its own.
func (c *Client) Close() error {
	c.pool.closeAll()
	return nil
}

// session returns an idle session, or dials clamd and opens one.
func (c *Client) session(ctx context.Context, fresh bool) (*session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !fresh {
		if s := c.pool.get(); s != nil {
			if err := s.arm(ctx, c.timeout); err != nil {
				s.close()
				return nil, fmt.Errorf("clamd %s: set deadline: %w", c.addr, err)
			}
			return s, nil
		}
	}
	s, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(s.conn, "zIDSESSION\x00"); err != nil {
		s.close()
		return nil, fmt.Errorf("clamd %s: write IDSESSION: %w", c.addr, err)
	}
	return s, nil
}

// release returns s to the pool after a command it completed, or closes it.
func (c *Client) release(s *session, ok bool) {
	if !s.disarm() || !ok || s.spent {
		_ = s.conn.Close()
		return
	}
	c.pool.put(s)
}

// sessionReply strips the command number clamd puts before a reply in a
// session ("3: stream: OK").
func sessionReply(reply string, n int) (string, error) {
	rest, ok := strings.CutPrefix(reply, strconv.Itoa(n)+": ")
	if !ok && strings.HasPrefix(reply, sessionTimeoutNotice) {
		return "", errSessionTimedOut
	}
	if !ok {
		return "", fmt.Errorf("unexpected reply %q for command %d of the session", reply, n)
	}
	return rest, nil
}

// errStale marks a failure on a reused session that shows clamd had ended
// it while it was idle, which says nothing about clamd's health: the scan
// is retried at once on a new connection without counting as an attempt.
var errStale = errors.New("clamd session ended while idle")

// staleCause reports whether err, on a reused session, says that clamd had
// ended it before this command: it refused the command's bytes, or it
// answered with its idle timeout notice. Anything after the body was
// accepted (no reply, a timeout) counts as clamd's failure.
func staleCause(s *session, err error) bool {
	if !s.reused {
		return false
	}
	var we *writeError
	if errors.As(err, &we) {
		return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
	}
	return errors.Is(err, errSessionTimedOut)
}
