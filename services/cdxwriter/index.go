package cdxwriter

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
)

// openIndex is the seam between the writer and pkg/cdxindex: with no
// Deps.Index it opens the Pebble index under Config.IndexDir() for the
// duration of Run and returns its OutbackCDX handler (writes open only
// with Config.CDXWritesOpen: no token is known here); otherwise it uses
// the given index and Deps.API.
func (w *Writer) openIndex() (api http.Handler, closeIndex func(), err error) {
	if w.d.Index != nil {
		w.index = w.d.Index
		return w.d.API, func() {}, nil
	}
	ix, err := cdxindex.Open(w.cfg.IndexDir(), cdxindex.Options{Logger: w.log.With("part", "index"), Registerer: w.d.Registerer})
	if err != nil {
		return nil, nil, fmt.Errorf("cdxwriter: %w", err)
	}
	w.index = ix
	return ix.Handler(w.cfg.APIOptions(admin.Tokens{}, w.log)), func() {
		if err := ix.Close(); err != nil {
			w.log.Error("close cdx index", "err", err)
		}
	}, nil
}

// APIOptions are the OutbackCDX API's options: writes need the operator
// token of tokens, or are open with CDXWritesOpen. It logs once who may
// write, and warns when writes are open to more than this machine.
func (c Config) APIOptions(tokens admin.Tokens, log *slog.Logger) cdxindex.HandlerOptions {
	opts := cdxindex.HandlerOptions{Tokens: tokens, OpenWrites: c.CDXWritesOpen}
	switch {
	case c.CDXAddr == "":
	case c.CDXWritesOpen && !loopbackOnly(c.CDXAddr):
		log.Warn("CDX API writes are open to anyone who reaches the listener (--cdx-writes-open): they can add and delete index lines",
			"addr", c.CDXAddr)
	case c.CDXWritesOpen:
		log.Info("CDX API writes are open on loopback (--cdx-writes-open)", "addr", c.CDXAddr)
	case tokens.Operator != nil:
		log.Info("CDX API writes (POST ingest, delete, checkpoint) need the admin token", "addr", c.CDXAddr)
	default:
		log.Info("CDX API is read-only: writes need a token (--admin-token-file) or --cdx-writes-open", "addr", c.CDXAddr)
	}
	return opts
}

// loopbackOnly reports whether a listen address accepts connections from
// this machine only; ":8081" and "0.0.0.0:8081" accept them from anywhere.
func loopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
