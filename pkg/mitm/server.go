package mitm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for Config fields left zero.
const (
	defaultMaxBodyBytes = 10 << 20
	defaultIdleTimeout  = 30 * time.Second
)

// Config configures a Server.
type Config struct {
	// CA mints the leaf certificates for intercepted tunnels. Required.
	CA *CA
	// Handler fetches and records each request. Required.
	Handler Handler
	// MaxBodyBytes caps request bodies: larger ones get 413 without the
	// Handler being called. Default 10 MiB.
	MaxBodyBytes int64
	// IdleTimeout closes idle client keep-alive connections (and bounds the
	// time to read request headers and finish a TLS handshake). Default 30s.
	IdleTimeout time.Duration
	// Log receives connection and handler errors. Nil discards them.
	Log *slog.Logger
}

// Server is the render proxy's client-facing side. It serves plain proxy
// requests and intercepted CONNECT tunnels on one listener.
type Server struct {
	cfg Config
	log *slog.Logger

	// ctx is the parent of every request context, so Close cancels all
	// running Handle calls at once.
	ctx    context.Context
	cancel context.CancelFunc

	// outer parses the proxy connections; inner serves the decrypted
	// streams of intercepted tunnels, fed through tunnels.
	outer   *http.Server
	inner   *http.Server
	tunnels *chanListener

	requests atomic.Int64

	mu     sync.Mutex
	closed bool
	// conns holds every accepted client connection. http.Server forgets a
	// connection once it is hijacked, so Close needs its own list to kill
	// CONNECT tunnels.
	conns       map[net.Conn]struct{}
	innerServed bool
	// wg counts running ServeHTTP calls and the inner Serve loop; Close
	// waits for it. Add is only called under mu while !closed.
	wg sync.WaitGroup
}

// NewServer returns a Server for cfg. It fails if CA or Handler is nil.
func NewServer(cfg Config) (*Server, error) {
	if cfg.CA == nil {
		return nil, errors.New("mitm: Config.CA is nil")
	}
	if cfg.Handler == nil {
		return nil, errors.New("mitm: Config.Handler is nil")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = defaultMaxBodyBytes
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = defaultIdleTimeout
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:     cfg,
		log:     log,
		ctx:     ctx,
		cancel:  cancel,
		tunnels: newChanListener(),
		conns:   make(map[net.Conn]struct{}),
	}
	s.outer = s.newHTTPServer(http.HandlerFunc(s.serveProxy))
	s.inner = s.newHTTPServer(http.HandlerFunc(s.serveTunneled))
	s.inner.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if tc, ok := c.(*tunneledConn); ok {
			return context.WithValue(ctx, authorityKey{}, tc.authority)
		}
		return ctx
	}
	return s, nil
}

func (s *Server) newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.cfg.IdleTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		// "OPTIONS *" is not a proxy request; let the handler refuse it
		// instead of net/http answering 200 on the origin's behalf.
		DisableGeneralOptionsHandler: true,
	}
}

// Serve accepts proxy connections on ln until Close is called, then returns
// nil. Other errors are those of ln.Accept. ln is closed on return.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ln.Close()
		return nil
	}
	if !s.innerServed {
		s.innerServed = true
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			// The only error is ErrServerClosed: tunnels never fails Accept
			// before it is closed.
			_ = s.inner.Serve(s.tunnels)
		}()
	}
	s.mu.Unlock()

	err := s.outer.Serve(&trackingListener{Listener: ln, s: s})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("mitm: serve: %w", err)
}

// Close stops accepting connections, closes every client connection
// (including CONNECT tunnels), cancels the context of running Handle calls
// and waits for them to return.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()

	s.cancel()
	// Raw sockets go first: closing a TLS conn sends close_notify, which
	// could wait on a client that stopped reading; with the socket gone it
	// fails at once.
	for _, c := range conns {
		// Errors here are "already closed", which is the goal.
		_ = c.Close()
	}
	errOuter := s.outer.Close()
	errInner := s.inner.Close()
	_ = s.tunnels.Close()
	s.wg.Wait()
	if err := errors.Join(errOuter, errInner); err != nil {
		return fmt.Errorf("mitm: close: %w", err)
	}
	return nil
}

// Requests returns how many requests have been handed to the Handler.
func (s *Server) Requests() int64 { return s.requests.Load() }

// enter registers a running request so Close can wait for it; it returns
// false once the Server is closing.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// trackingListener records every accepted connection in the Server.
type trackingListener struct {
	net.Listener
	s *Server
}

func (l *trackingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: c, s: l.s}
		if l.s.track(tc) {
			return tc, nil
		}
		// Closing raced with Accept: drop the connection, and keep
		// accepting until http.Server closes the listener.
		_ = c.Close()
	}
}

// trackedConn removes itself from the Server's list when closed.
type trackedConn struct {
	net.Conn
	s    *Server
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.s.untrack(c) })
	return c.Conn.Close()
}

// chanListener is a net.Listener whose connections are the decrypted
// streams of intercepted tunnels, so one http.Server serves them all.
type chanListener struct {
	ch        chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func newChanListener() *chanListener {
	return &chanListener{ch: make(chan net.Conn), done: make(chan struct{})}
}

// push hands c to the serving loop, or closes it if the listener is closed.
func (l *chanListener) push(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return tunnelAddr{} }

type tunnelAddr struct{}

func (tunnelAddr) Network() string { return "tunnel" }
func (tunnelAddr) String() string  { return "tunnel" }
