package clamav_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/clamav"
)

// fakeClamd is a loopback server that models failures a real clamd does not
// produce on demand: hanging, error replies, garbage, early close.
type fakeClamd struct {
	addr  string
	conns atomic.Int32
	// accepted receives one value per connection, so tests can act once
	// the client is connected without sleeping.
	accepted chan struct{}
}

// startFake serves handle on every connection until the test ends.
func startFake(t *testing.T, handle func(net.Conn)) *fakeClamd {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeClamd{addr: l.Addr().String(), accepted: make(chan struct{}, 100)}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			f.conns.Add(1)
			f.accepted <- struct{}{}
			wg.Go(func() {
				defer conn.Close()
				handle(conn)
			})
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
	})
	return f
}

// readCommand reads the NUL-terminated command the client sends first.
func readCommand(conn net.Conn) string {
	var cmd []byte
	b := make([]byte, 1)
	for {
		if _, err := conn.Read(b); err != nil || b[0] == 0 {
			return string(cmd)
		}
		cmd = append(cmd, b[0])
	}
}

// drainThen consumes the command and the whole INSTREAM body (until the
// client stops sending or closes) and then writes reply.
func drainThen(reply string) func(net.Conn) {
	return func(conn net.Conn) {
		readCommand(conn)
		var hdr [4]byte
		for {
			if _, err := io.ReadFull(conn, hdr[:]); err != nil {
				return
			}
			n := int64(hdr[0])<<24 | int64(hdr[1])<<16 | int64(hdr[2])<<8 | int64(hdr[3])
			if n == 0 {
				break
			}
			if _, err := io.CopyN(io.Discard, conn, n); err != nil {
				return
			}
		}
		_, _ = io.WriteString(conn, reply)
	}
}

// hang reads everything and never answers, until the client gives up.
func hang(conn net.Conn) { _, _ = io.Copy(io.Discard, conn) }

func TestScanFailuresAreRetriedThenUnavailable(t *testing.T) {
	cases := []struct {
		name    string
		handle  func(net.Conn)
		wantMsg string
	}{
		{"hang until timeout", hang, "i/o timeout"},
		{"error reply", drainThen("stream: Can't allocate memory ERROR\x00"), `error reply "stream: Can't allocate memory ERROR"`},
		{"garbage reply", drainThen("HTTP/1.1 400 Bad Request\r\n\r\n\x00"), `unexpected reply "HTTP/1.1 400 Bad Request`},
		{"empty signature", drainThen("stream:  FOUND\x00"), `unexpected reply "stream:  FOUND"`},
		{"reply without terminator", drainThen("stream: OK"), `connection closed inside reply "stream: OK"`},
		{"oversized reply", drainThen(strings.Repeat("A", 10000)), "reply longer than 4096 bytes"},
		{"close before reply", drainThen(""), "connection closed before any reply"},
		{"close after command", func(conn net.Conn) { readCommand(conn) }, "clamd 127.0.0.1"},
		{"close at once", func(net.Conn) {}, "clamd 127.0.0.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, tc.handle)
			c := newClient(t, clamav.Options{Address: f.addr, Retries: 2, RetryDelay: time.Millisecond, Timeout: 200 * time.Millisecond})
			var calls atomic.Int32
			start := time.Now()
			res, err := c.Scan(t.Context(), body([]byte("some body"), &calls))
			if !errors.Is(err, clamav.ErrUnavailable) {
				t.Fatalf("err = %v, want ErrUnavailable", err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), "after 3 attempt(s)") {
				t.Errorf("err %q: want it to contain %q and the attempt count", err, tc.wantMsg)
			}
			if res.Infected || res.Reply != "" {
				t.Errorf("result %+v on error, want zero", res)
			}
			if calls.Load() != 3 || f.conns.Load() != 3 {
				t.Errorf("opens %d, connections %d; want 3 each", calls.Load(), f.conns.Load())
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v: timeout not applied", d)
			}
		})
	}
}

func TestScanRecoversOnRetry(t *testing.T) {
	var n atomic.Int32
	f := startFake(t, func(conn net.Conn) {
		if n.Add(1) == 1 {
			drainThen("stream: lstat() failed ERROR\x00")(conn)
			return
		}
		drainThen("stream: Fake.Sig FOUND\x00")(conn)
	})
	c := newClient(t, clamav.Options{Address: f.addr, Retries: 1, RetryDelay: time.Millisecond})
	res, err := c.Scan(t.Context(), body([]byte("x"), nil))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Infected || res.Signature != "Fake.Sig" || res.Reply != "stream: Fake.Sig FOUND" {
		t.Errorf("got %+v", res)
	}
}

func TestScanNoRetries(t *testing.T) {
	f := startFake(t, drainThen("stream: x ERROR\x00"))
	c := newClient(t, clamav.Options{Address: f.addr, RetryDelay: time.Millisecond})
	if _, err := c.Scan(t.Context(), body([]byte("x"), nil)); !errors.Is(err, clamav.ErrUnavailable) || f.conns.Load() != 1 {
		t.Fatalf("err = %v after %d connections; want ErrUnavailable after 1 (Retries 0)", err, f.conns.Load())
	}
}

func TestScanContextCancel(t *testing.T) {
	cases := []struct {
		name   string
		handle func(net.Conn)
		// cancelAfter is how many connections to wait for before cancelling.
		cancelAfter int
	}{
		{"while waiting for the reply", hang, 1},
		{"during the retry backoff", drainThen("stream: x ERROR\x00"), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, tc.handle)
			c := newClient(t, clamav.Options{Address: f.addr, Timeout: time.Hour, Retries: 5, RetryDelay: time.Hour})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			go func() {
				for range tc.cancelAfter {
					<-f.accepted
				}
				cancel()
			}()
			start := time.Now()
			_, err := c.Scan(ctx, body([]byte("x"), nil))
			if !errors.Is(err, context.Canceled) || errors.Is(err, clamav.ErrUnavailable) {
				t.Fatalf("err = %v, want context.Canceled and not ErrUnavailable", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v after cancel", d)
			}
			if f.conns.Load() != 1 {
				t.Errorf("%d connections, want 1", f.conns.Load())
			}
		})
	}
}

func TestScanDeadlineBoundsAttempt(t *testing.T) {
	f := startFake(t, hang)
	c := newClient(t, clamav.Options{Address: f.addr, Timeout: time.Hour})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Scan(ctx, body([]byte("x"), nil)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
}

// failingReader returns its data, then err.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, f.err
	}
	return n, err
}

func (f *failingReader) Close() error { return nil }

func TestScanBodyErrorsAreNotRetried(t *testing.T) {
	boom := errors.New("spool closed")
	cases := []struct {
		name    string
		open    func() (io.ReadCloser, error)
		wantMsg string
	}{
		{"open fails", func() (io.ReadCloser, error) { return nil, boom }, "open body: spool closed"},
		{"read fails mid-body", func() (io.ReadCloser, error) {
			return &failingReader{r: bytes.NewReader(make([]byte, 2500)), err: boom}, nil
		}, "read body at byte 2500: spool closed"},
		{"read fails past the limit", func() (io.ReadCloser, error) {
			return &failingReader{r: bytes.NewReader(make([]byte, 4096)), err: boom}, nil
		}, "read body at byte 4096: spool closed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, drainThen("stream: OK\x00"))
			c := newClient(t, clamav.Options{Address: f.addr, Retries: 3, RetryDelay: time.Millisecond, ChunkSize: 1000, StreamMaxLength: 4096})
			var calls atomic.Int32
			open := func() (io.ReadCloser, error) { calls.Add(1); return tc.open() }
			_, err := c.Scan(t.Context(), open)
			if !errors.Is(err, boom) || errors.Is(err, clamav.ErrUnavailable) {
				t.Fatalf("err = %v, want the body error and not ErrUnavailable", err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("err %q, want %q", err, tc.wantMsg)
			}
			if calls.Load() != 1 {
				t.Errorf("%d opens, want 1", calls.Load())
			}
		})
	}
}

func TestPingVersionBadReplies(t *testing.T) {
	f := startFake(t, func(conn net.Conn) {
		readCommand(conn)
		_, _ = io.WriteString(conn, "NOPE\x00")
	})
	c := newClient(t, clamav.Options{Address: f.addr})
	if err := c.Ping(t.Context()); !errors.Is(err, clamav.ErrUnavailable) || !strings.Contains(err.Error(), `"NOPE"`) {
		t.Errorf("ping err = %v", err)
	}
	if _, err := c.Version(t.Context()); !errors.Is(err, clamav.ErrUnavailable) || !strings.Contains(err.Error(), `"NOPE"`) {
		t.Errorf("version err = %v", err)
	}
}

func TestScanBackoffDoubles(t *testing.T) {
	f := startFake(t, drainThen("stream: x ERROR\x00"))
	c := newClient(t, clamav.Options{Address: f.addr, Retries: 3, RetryDelay: 40 * time.Millisecond})
	start := time.Now()
	if _, err := c.Scan(t.Context(), body([]byte("x"), nil)); !errors.Is(err, clamav.ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	// 40 + 80 + 160 ms of backoff; a fixed delay would take 120 ms.
	if d := time.Since(start); d < 280*time.Millisecond {
		t.Errorf("3 retries took %v, want >= 280ms of doubling backoff", d)
	}
}
