package testweb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// sharedPortAttempts bounds how often Start tries to find one port free on
// every host IP before giving each host its own port.
const sharedPortAttempts = 20

// Server serves a Site: one listener per host IP. It is safe for concurrent
// use; Close stops it, including responses that are still streaming.
type Server struct {
	site     *Site
	log      *slog.Logger
	vhosts   []*vhost // site hosts in order, then hostile.test if enabled
	resolver *Resolver
	epoch    atomic.Int64
	bomb     func() []byte // gzip member of the bomb, built on first use
	bodies   sync.Pool     // *bytes.Buffer for rendered bodies, see bodyBuffer

	done     chan struct{} // closed by Close: streaming handlers stop
	mu       sync.Mutex
	closed   bool
	hijacked map[net.Conn]struct{}
	handlers sync.WaitGroup // running handlers
	serving  sync.WaitGroup // Serve loops

	// trap counts connections to a loopback address next to the site's
	// (Config.Scripted): pages ask for it, and a crawler must never
	// connect.
	trap *trap

	stopAfter func() bool // unregisters the ctx.Done hook
	closeOnce sync.Once
	closeErr  error
}

// vhost is one listening host.
type vhost struct {
	name string
	addr netip.AddrPort
	srv  *http.Server
}

// Start binds one listener per host (and hostile.test when enabled) and
// serves until Close is called or ctx is done. All hosts share one port
// when it can be bound on every IP; otherwise each gets its own.
func (s *Site) Start(ctx context.Context) (*Server, error) {
	return s.startWith(ctx, sharedPortAttempts)
}

// startWith is Start with a given number of shared-port attempts.
func (s *Site) startWith(ctx context.Context, attempts int) (*Server, error) {
	ips := make([]netip.Addr, 0, s.cfg.Hosts+1)
	for ip, i := s.cfg.IPBase, 0; i < s.cfg.Hosts; ip, i = ip.Next(), i+1 {
		ips = append(ips, ip)
	}
	names := make([]string, 0, len(ips)+1)
	for i := range s.cfg.Hosts {
		names = append(names, s.HostName(i))
	}
	if s.cfg.Hostile {
		ips = append(ips, ips[len(ips)-1].Next())
		names = append(names, HostileName)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("testweb start: %w", err)
	}
	lns, err := listenAll(ctx, ips, s.cfg.Port, attempts)
	if err != nil {
		return nil, fmt.Errorf("testweb start: %w", err)
	}
	srv := &Server{
		site:     s,
		log:      s.cfg.Logger,
		done:     make(chan struct{}),
		hijacked: make(map[net.Conn]struct{}),
		bomb:     sync.OnceValue(gzipBombMember),
	}
	addrs := make(map[string]netip.Addr, len(names))
	for i, ln := range lns {
		vh := &vhost{name: names[i], addr: ln.Addr().(*net.TCPAddr).AddrPort()}
		var h http.Handler = srv.siteHandler(i)
		if i == s.cfg.Hosts {
			h = srv.hostileHandler()
		}
		vh.srv = &http.Server{
			Handler:           srv.track(vh.name, h),
			ReadHeaderTimeout: 30 * time.Second,
			ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelDebug),
		}
		srv.vhosts = append(srv.vhosts, vh)
		addrs[vh.name] = vh.addr.Addr()
	}
	srv.resolver = &Resolver{addrs: addrs}
	if s.cfg.Scripted {
		if srv.trap, err = startTrap(ctx, s.cfg.IPBase.Prev()); err != nil {
			for _, ln := range lns {
				_ = ln.Close()
			}
			return nil, fmt.Errorf("testweb start: %w", err)
		}
	}
	// Serve only once every vhost exists: handlers read all of them.
	for i, ln := range lns {
		vh := srv.vhosts[i]
		srv.serving.Add(1)
		go func() {
			defer srv.serving.Done()
			if err := vh.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				srv.log.Error("testweb serve", "host", vh.name, "err", err)
			}
		}()
	}
	srv.mu.Lock() // the hook may fire at once; Close reads stopAfter under mu
	srv.stopAfter = context.AfterFunc(ctx, func() { _ = srv.Close() })
	srv.mu.Unlock()
	srv.log.Info("testweb started", "hosts", len(srv.vhosts), "first", srv.vhosts[0].addr.String())
	return srv, nil
}

// listenAll binds a TCP listener on each IP. With port 0 it looks for a
// port free on all of them, retrying on collisions, then falls back to a
// separate ephemeral port per IP.
func listenAll(ctx context.Context, ips []netip.Addr, port, attempts int) ([]net.Listener, error) {
	if port != 0 {
		return listenOn(ctx, ips, port)
	}
	var lc net.ListenConfig
	for range attempts {
		first, err := lc.Listen(ctx, "tcp", netip.AddrPortFrom(ips[0], 0).String())
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", ips[0], err)
		}
		p := first.Addr().(*net.TCPAddr).Port
		rest, err := listenOn(ctx, ips[1:], p)
		if err == nil {
			return append([]net.Listener{first}, rest...), nil
		}
		_ = first.Close()
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, err
		}
	}
	lns := make([]net.Listener, 0, len(ips))
	for _, ip := range ips {
		ln, err := lc.Listen(ctx, "tcp", netip.AddrPortFrom(ip, 0).String())
		if err != nil {
			closeAll(lns)
			return nil, fmt.Errorf("listen %s: %w", ip, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// listenOn binds port on every IP, or nothing.
func listenOn(ctx context.Context, ips []netip.Addr, port int) ([]net.Listener, error) {
	var lc net.ListenConfig
	lns := make([]net.Listener, 0, len(ips))
	for _, ip := range ips {
		addr := netip.AddrPortFrom(ip, uint16(port)).String()
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			closeAll(lns)
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// closeAll closes listeners opened before a failure.
func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		_ = ln.Close()
	}
}

// track counts running handlers so Close can wait for them, and refuses
// requests that arrive while closing.
func (srv *Server) track(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !srv.enter() {
			http.Error(w, "server closing", http.StatusServiceUnavailable)
			return
		}
		defer srv.handlers.Done()
		if !hostMatches(r.Host, name) {
			http.Error(w, "this server is "+name, http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// enter registers a handler unless the server is closing.
func (srv *Server) enter() bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.closed {
		return false
	}
	srv.handlers.Add(1)
	return true
}

// hostMatches reports whether a Host header names host (port optional).
// A missing Host header (a bare HTTP/1.0 request) is accepted: the
// listener already identifies the host.
func hostMatches(hostHeader, host string) bool {
	if hostHeader == "" {
		return true
	}
	if h, _, err := net.SplitHostPort(hostHeader); err == nil {
		hostHeader = h
	}
	return normalizeName(hostHeader) == host
}

// Close stops all listeners, ends streaming and hijacked responses, and
// waits for every handler and serve loop to return. It is idempotent.
func (srv *Server) Close() error {
	srv.closeOnce.Do(func() {
		srv.mu.Lock()
		if srv.stopAfter != nil {
			srv.stopAfter() // never blocks: it only unregisters the hook
		}
		srv.closed = true
		if srv.trap != nil {
			srv.trap.close()
		}
		conns := make([]net.Conn, 0, len(srv.hijacked))
		for c := range srv.hijacked {
			conns = append(conns, c)
		}
		srv.mu.Unlock()
		// Connections go first, so a streaming handler woken by done can
		// no longer finish its response cleanly: the client must see a
		// truncated body, not a complete one.
		var errs []error
		for _, vh := range srv.vhosts {
			if err := vh.srv.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close %s: %w", vh.name, err))
			}
		}
		for _, c := range conns {
			_ = c.Close()
		}
		close(srv.done)
		srv.serving.Wait()
		srv.handlers.Wait()
		srv.closeErr = errors.Join(errs...)
	})
	return srv.closeErr
}

// authority returns name:port of host index h (hostHostile for hostile).
func (srv *Server) authority(h int) string {
	vh := srv.vhost(h)
	return vh.name + ":" + strconv.Itoa(int(vh.addr.Port()))
}

// vhost returns the listening host for a host index.
func (srv *Server) vhost(h int) *vhost {
	if h == hostHostile {
		return srv.vhosts[len(srv.vhosts)-1]
	}
	return srv.vhosts[h]
}

// Site returns the site being served.
func (srv *Server) Site() *Site { return srv.site }

// Resolver returns the name resolver for the site's hosts.
func (srv *Server) Resolver() *Resolver { return srv.resolver }

// Seeds returns one seed URL per site host: its home page.
func (srv *Server) Seeds() []string {
	out := make([]string, srv.site.cfg.Hosts)
	for i := range out {
		out[i] = target{i, "/"}.url(srv.authority)
	}
	return out
}

// HostNames returns the names of the site hosts (not hostile.test).
func (srv *Server) HostNames() []string {
	out := make([]string, srv.site.cfg.Hosts)
	for i := range out {
		out[i] = srv.vhosts[i].name
	}
	return out
}

// HostileURL returns the URL of path on hostile.test, or "" when the site
// has no hostile host.
func (srv *Server) HostileURL(path string) string {
	if !srv.site.cfg.Hostile {
		return ""
	}
	return target{hostHostile, path}.url(srv.authority)
}

// SetEpoch switches the content version served from now on. Epoch 0 is
// served after Start. About one HTML document in five (and the sitemaps
// listing one) differs between any two epochs; everything else, links
// included, stays the same. See Changed.
func (srv *Server) SetEpoch(n int) { srv.epoch.Store(int64(n)) }

// Epoch returns the epoch being served.
func (srv *Server) Epoch() int { return int(srv.epoch.Load()) }
