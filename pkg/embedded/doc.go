// Package embedded runs the single-machine cluster that `trawler standalone`
// and `trawler demo` need (ARCHITECTURE.md section 10): a one-broker Kafka
// (franz-go's kfake) persisting to a data directory, and Redis, either a
// managed redis-server child process with an append-only file in its data
// directory or, when no binary is installed, the in-process miniredis.
//
// Both listen on loopback only: they have no authentication, and the point of
// the loopback port is that kcat, redis-cli and the other roles can attach.
// Each data directory is locked while in use, so two processes never write
// the same state.
package embedded

import (
	"fmt"
	"log/slog"
	"net"
)

// discardLogger is used when the caller gives no logger, so the code below
// never has to nil-check.
func discardLogger(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// loopbackAddr checks that addr is host:port with a loopback host, filling
// def when addr is empty. Embedded servers have no authentication, so
// binding them to a routable interface would expose the crawl's state.
func loopbackAddr(addr, def string) (string, error) {
	if addr == "" {
		addr = def
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w", addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return "", fmt.Errorf("listen address %q: bad port: %w", addr, err)
	}
	if host == "localhost" {
		return addr, nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("listen address %q: host must be a loopback address (127.0.0.1, ::1 or localhost)", addr)
	}
	return addr, nil
}
