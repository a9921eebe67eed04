package cdxwriter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// listenAPI binds the OutbackCDX API address (so a taken port fails Run at
// once), or takes Deps.APIListener, and returns the part that serves it
// until ctx ends.
func (w *Writer) listenAPI(h http.Handler) (func(context.Context) error, error) {
	ln := w.d.APIListener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", w.cfg.CDXAddr); err != nil {
			return nil, fmt.Errorf("cdxwriter: listen for the CDX API on %s: %w", w.cfg.CDXAddr, err)
		}
	}
	w.apiAddr.Store(ln.Addr().String())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return func(ctx context.Context) error {
		w.log.Info("CDX API listening", "addr", ln.Addr().String())
		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(ln) }()
		select {
		case err := <-errc:
			return fmt.Errorf("cdxwriter: CDX API: %w", err)
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		if err != nil {
			return fmt.Errorf("cdxwriter: stop CDX API: %w", err)
		}
		return nil
	}, nil
}
