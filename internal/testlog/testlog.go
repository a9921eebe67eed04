// Package testlog gives tests a logger whose output they can assert on.
package testlog

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer is a concurrency-safe sink for a test logger: services log from
// many goroutines while the test reads what they wrote.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// New returns a text logger at level and the buffer it writes to.
func New(level slog.Level) (*slog.Logger, *Buffer) {
	b := &Buffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: level})), b
}
