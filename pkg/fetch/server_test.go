package fetch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// rawServer is a TCP server on 127.0.0.1 whose handler writes exact bytes,
// so tests can compare the recorded response with what was sent.
type rawServer struct {
	ln       net.Listener
	handler  func(s *session)
	accepted atomic.Int32
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	requests chan []byte
	done     chan struct{}
	stopOnce sync.Once
}

// session is one accepted connection as the handler sees it.
type session struct {
	conn    net.Conn
	br      *bufio.Reader
	srv     *rawServer
	written bytes.Buffer // everything the handler wrote
}

func startServer(t *testing.T, handler func(s *session)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, handler: handler, conns: map[net.Conn]struct{}{},
		requests: make(chan []byte, 16), done: make(chan struct{})}
	s.wg.Go(s.acceptLoop)
	t.Cleanup(s.stop)
	return s
}

func (s *rawServer) acceptLoop() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() {
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				_ = c.Close()
			}()
			s.handler(&session{conn: c, br: bufio.NewReader(c), srv: s})
		})
	}
}

func (s *rawServer) stop() { s.stopOnce.Do(s.doStop) }

func (s *rawServer) doStop() {
	close(s.done)
	_ = s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *rawServer) port() string {
	return strconv.Itoa(s.ln.Addr().(*net.TCPAddr).Port)
}

// readRequest reads one request head (up to the blank line) and publishes it.
func (ss *session) readRequest() ([]byte, error) {
	var req []byte
	for {
		line, err := ss.br.ReadBytes('\n')
		req = append(req, line...)
		if err != nil {
			return req, err
		}
		if bytes.Equal(line, []byte("\r\n")) {
			select {
			case ss.srv.requests <- req:
			default:
			}
			return req, nil
		}
	}
}

func (ss *session) write(p []byte) error {
	n, err := ss.conn.Write(p)
	ss.written.Write(p[:n])
	return err
}

// reset closes the connection with an RST instead of a FIN.
func (ss *session) reset() {
	if tc, ok := ss.conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = ss.conn.Close()
}

// waitClosed blocks until the client closes the connection or the server
// stops, so a "stalling" server never needs a sleep to end.
func (ss *session) waitClosed() {
	go func() {
		<-ss.srv.done
		_ = ss.conn.Close()
	}()
	_, _ = io.Copy(io.Discard, ss.br)
}

// respond returns a handler that reads one request and writes resp.
func respond(resp string) func(*session) {
	return func(ss *session) {
		if _, err := ss.readRequest(); err != nil {
			return
		}
		_ = ss.write([]byte(resp))
	}
}

// staticResolver maps names to addresses; unknown names fail as NXDOMAIN.
type staticResolver map[string][]string

func (r staticResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	addrs, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, net.IPAddr{IP: net.ParseIP(a)})
	}
	return out, nil
}

// fetchErr asserts err is an *Error with the given status.
func fetchErr(t *testing.T, err error, status int, retriable bool) *Error {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not *fetch.Error", err, err)
	}
	if fe.Status != status || fe.Retriable != retriable {
		t.Fatalf("got status %d retriable %v (%v), want %d retriable %v", fe.Status, fe.Retriable, fe.Err, status, retriable)
	}
	return fe
}
