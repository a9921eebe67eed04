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
	// maxIdleSessions bounds the sessions kept open between scans.
	maxIdleSessions = 32
	// sessionIdle is how long a session may wait for its next command.
	// clamd ends one idle for CommandReadTimeout (5 s before ClamAV 0.104,
	// 30 s since), and a scan on an ended session costs a redial.
	sessionIdle = 4 * time.Second
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
	closed bool
}

// get returns an idle session that has not waited too long, or nil.
func (p *sessions) get() *session {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.idle) > 0 {
		s := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if time.Since(s.idle) < sessionIdle {
			return s
		}
		go s.end() // clamd may be gone; do not make the scan wait
	}
	return nil
}

// put keeps s for the next scan, ending the oldest session when full.
func (p *sessions) put(s *session) {
	s.idle, s.reused = time.Now(), true
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		s.end()
		return
	}
	if len(p.idle) >= maxIdleSessions {
		go p.idle[0].end()
		p.idle = p.idle[1:]
	}
	p.idle = append(p.idle, s)
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
	if !s.disarm() || !ok {
		_ = s.conn.Close()
		return
	}
	c.pool.put(s)
}

// sessionReply strips the command number clamd puts before a reply in a
// session ("3: stream: OK").
func sessionReply(reply string, n int) (string, error) {
	rest, ok := strings.CutPrefix(reply, strconv.Itoa(n)+": ")
	if !ok {
		return "", fmt.Errorf("unexpected reply %q for command %d of the session", reply, n)
	}
	return rest, nil
}

// errStale marks a failure on a reused session before clamd answered: the
// session had ended on clamd's side (idle timeout, restart), which says
// nothing about clamd's health, so the scan is retried at once on a new
// connection without counting as an attempt.
var errStale = errors.New("clamd session ended while idle")

// staleCause reports whether err, on a reused session, looks like the
// peer had closed it before the command.
func staleCause(s *session, err error) bool {
	if !s.reused {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, errClosedBeforeReply)
}
