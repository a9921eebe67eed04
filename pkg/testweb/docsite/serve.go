package docsite

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Server serves a generated site over HTTP/1.1 until Close or the end of
// the context given to Serve.
type Server struct {
	srv       *http.Server
	url       string
	served    chan error // result of the serve loop
	stopAfter func() bool
	closeOnce sync.Once
	closeErr  error
}

// Serve listens on addr ("127.0.0.1:0" picks a free port) and serves dir
// with http.FileServer: plain files, no compression, Content-Length,
// Last-Modified and range support as the standard library gives them.
// It fails if dir holds no generated site (no index.html). As any
// FileServer, it redirects /index.html to / and lists /pages/; no
// generated page links either.
func Serve(ctx context.Context, dir, addr string) (*Server, error) {
	if _, err := os.Stat(filepath.Join(dir, IndexFile)); err != nil {
		return nil, fmt.Errorf("docsite serve %s: not a generated site: %w", dir, err)
	}
	return ServeDir(ctx, dir, addr)
}

// ServeDir is Serve for any directory, such as a documentation package's
// HTML: a directory without index.html is served as the FileServer's
// listing of its files.
func ServeDir(ctx context.Context, dir, addr string) (*Server, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, fmt.Errorf("docsite serve %s: %w", dir, err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("docsite serve: listen %s: %w", addr, err)
	}
	s := &Server{
		srv: &http.Server{
			Handler:           http.FileServer(http.Dir(dir)),
			ReadHeaderTimeout: 30 * time.Second,
		},
		url:    "http://" + ln.Addr().String(),
		served: make(chan error, 1),
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	s.stopAfter = context.AfterFunc(ctx, func() { _ = s.Close() })
	return s, nil
}

// URL returns the base URL, without a trailing slash
// (http://127.0.0.1:PORT); the index is at URL()+"/".
func (s *Server) URL() string { return s.url }

// Close stops the server, cutting open connections, and waits for its
// serve loop. It is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.stopAfter()
		err := s.srv.Close()
		if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		if err != nil {
			s.closeErr = fmt.Errorf("docsite close: %w", err)
		}
	})
	return s.closeErr
}
