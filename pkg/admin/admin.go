// Package admin serves the operator endpoints every Trawler role exposes:
// /metrics (Prometheus), /healthz (the process is alive) and /readyz (the
// role's dependencies answer and it is taking work).
package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ReadyFunc reports whether the role can take work; a non-nil error makes
// /readyz answer 503 with the error text.
type ReadyFunc func(ctx context.Context) error

// Server is the admin HTTP listener.
type Server struct {
	ln     net.Listener
	srv    *http.Server
	mux    *http.ServeMux
	logger *slog.Logger

	mu     sync.Mutex
	checks map[string]ReadyFunc
	done   chan struct{}
}

// Listen binds addr (e.g. ":9100" or "127.0.0.1:0") and serves in the
// background until Close. gatherer supplies /metrics.
func Listen(addr string, gatherer prometheus.Gatherer, logger *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listen %s: %w", addr, err)
	}
	return Serve(ln, gatherer, logger), nil
}

// Serve is Listen on a listener already bound (standalone binds every
// listener before it starts anything, so a taken port fails at once). The
// server owns ln from then on.
func Serve(ln net.Listener, gatherer prometheus.Gatherer, logger *slog.Logger) *Server {
	mux := http.NewServeMux()
	s := &Server{ln: ln, mux: mux, logger: logger, checks: map[string]ReadyFunc{}, done: make(chan struct{})}
	mux.Handle("/metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", s.serveReady)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("admin server stopped", "err", err)
		}
	}()
	return s
}

// Addr is the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// AddReadyCheck registers a named readiness check.
func (s *Server) AddReadyCheck(name string, f ReadyFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks[name] = f
}

func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	checks := make(map[string]ReadyFunc, len(s.checks))
	for k, v := range s.checks {
		checks[k] = v
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	for name, f := range checks {
		if err := f(ctx); err != nil {
			http.Error(w, fmt.Sprintf("%s: %v", name, err), http.StatusServiceUnavailable)
			return
		}
	}
	_, _ = w.Write([]byte("ready\n"))
}

// Close stops the listener, letting in-flight requests finish briefly.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}
