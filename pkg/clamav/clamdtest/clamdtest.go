// Package clamdtest starts a real clamd for tests, with a small custom
// signature database, since the official definitions cannot be downloaded
// in a test environment.
//
// The database holds two signatures: EICARSignature over the EICAR test
// string and NDBSignature over TestNDBMarker. Both are body signatures
// (.ndb, any file type, any offset), so they match anywhere in a stream,
// across INSTREAM chunk boundaries too. clamd appends ".UNOFFICIAL" to the
// names of signatures from unsigned databases, hence the constants.
//
// clamd starts in well under a second with this database, so starting one
// per test that needs its own (a different StreamMaxLength, or to stop it)
// is cheap.
package clamdtest

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EICAR is the standard antivirus test string.
const EICAR = `X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`

// TestNDBMarker is matched by NDBSignature wherever it appears in a body.
const TestNDBMarker = "TRAWLER-CLAMAV-TEST-MARKER-5e1c9a73"

// Signature names as clamd reports them for the custom database.
const (
	EICARSignature = "Trawler.Test.EICAR.UNOFFICIAL"
	NDBSignature   = "Trawler.Test.NDB.UNOFFICIAL"
)

// startTimeout bounds clamd's start-up; it normally takes ~50 ms.
const startTimeout = 30 * time.Second

// Clamd is a running clamd.
type Clamd struct {
	// Addr is clamd's TCP address, 127.0.0.1:port.
	Addr string
	// Socket is the path of clamd's unix socket.
	Socket string
	// Dir holds clamd.conf, the database and the log.
	Dir string

	cmd      *exec.Cmd
	done     chan struct{} // closed when the process has exited
	out      *lockedBuffer
	stopOnce sync.Once
}

// Start starts clamd with StreamMaxLength streamMaxLength bytes and stops it
// in t.Cleanup. It fails the test if clamd is not installed or does not
// answer PING within 30 s; clamd's log is printed if the test fails.
func Start(t testing.TB, streamMaxLength int64) *Clamd {
	t.Helper()
	bin := findClamd()
	if bin == "" {
		t.Fatal("clamdtest: clamd not found in /usr/sbin or PATH: install clamav-daemon")
	}
	if streamMaxLength <= 0 {
		t.Fatalf("clamdtest: streamMaxLength %d: must be > 0", streamMaxLength)
	}
	dir := t.TempDir()
	// Unix socket paths are limited to ~108 bytes and t.TempDir embeds the
	// test name, so the socket lives in a short directory of its own.
	sockDir, err := os.MkdirTemp("", "clamd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	if err := writeDatabase(filepath.Join(dir, "db")); err != nil {
		t.Fatal(err)
	}
	// A free port can be taken by someone else before clamd binds it;
	// a few tries make that race harmless.
	var lastErr error
	for range 3 {
		c, err := start(bin, dir, filepath.Join(sockDir, "clamd.sock"), streamMaxLength)
		if err == nil {
			t.Cleanup(func() {
				c.Stop()
				if t.Failed() {
					t.Logf("clamd log:\n%s", c.Log())
				}
			})
			return c
		}
		lastErr = err
	}
	t.Fatalf("clamdtest: %v", lastErr)
	return nil
}

func findClamd() string {
	if _, err := os.Stat("/usr/sbin/clamd"); err == nil {
		return "/usr/sbin/clamd"
	}
	p, err := exec.LookPath("clamd")
	if err != nil {
		return ""
	}
	return p
}

func writeDatabase(dbDir string) error {
	if err := os.MkdirAll(dbDir, 0o755); err != nil {
		return fmt.Errorf("create database dir: %w", err)
	}
	// .ndb lines: Name:TargetType:Offset:HexSignature; target 0 is any
	// file, offset * is anywhere. clamd matches HTML (target 3) against
	// its normalised, lower-cased text, so the marker has a lower-case HTML
	// line of the same name too: a marker inside a web page is found.
	ndb := strings.TrimSuffix(NDBSignature, ".UNOFFICIAL")
	db := fmt.Sprintf("%s:0:*:%s\n%s:0:*:%s\n%s:3:*:%s\n",
		strings.TrimSuffix(EICARSignature, ".UNOFFICIAL"), hex.EncodeToString([]byte(EICAR)),
		ndb, hex.EncodeToString([]byte(TestNDBMarker)),
		ndb, hex.EncodeToString([]byte(strings.ToLower(TestNDBMarker))))
	if err := os.WriteFile(filepath.Join(dbDir, "trawler-test.ndb"), []byte(db), 0o644); err != nil {
		return fmt.Errorf("write database: %w", err)
	}
	return nil
}

func start(bin, dir, socket string, streamMaxLength int64) (*Clamd, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	_ = os.Remove(socket)
	c := &Clamd{
		Addr:   net.JoinHostPort("127.0.0.1", fmt.Sprint(port)),
		Socket: socket,
		Dir:    dir,
		done:   make(chan struct{}),
		out:    &lockedBuffer{},
	}
	conf := filepath.Join(dir, "clamd.conf")
	if err := os.WriteFile(conf, []byte(c.config(port, streamMaxLength)), 0o644); err != nil {
		return nil, fmt.Errorf("write clamd.conf: %w", err)
	}
	c.cmd = exec.Command(bin, "--config-file="+conf)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		_ = c.cmd.Wait()
		close(c.done)
	}()
	if err := c.waitReady(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("%w\nclamd log:\n%s", err, c.Log())
	}
	return c, nil
}

func (c *Clamd) config(port int, streamMaxLength int64) string {
	return strings.Join([]string{
		"Foreground yes",
		"TCPAddr 127.0.0.1",
		fmt.Sprintf("TCPSocket %d", port),
		"LocalSocket " + c.Socket,
		"DatabaseDirectory " + filepath.Join(c.Dir, "db"),
		"LogFile " + filepath.Join(c.Dir, "clamd.log"),
		"LogTime yes",
		fmt.Sprintf("StreamMaxLength %d", streamMaxLength),
		"MaxThreads 4",
		"SelfCheck 3600",
		"",
	}, "\n")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls PING on both sockets until they answer, clamd exits or
// the start-up deadline passes.
func (c *Clamd) waitReady() error {
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = c.ping("tcp", c.Addr); last == nil {
			if last = c.ping("unix", c.Socket); last == nil {
				return nil
			}
		}
		select {
		case <-c.done:
			return fmt.Errorf("clamd exited during start-up (last ping: %v)", last)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("clamd not ready after %v: %w", startTimeout, last)
		}
	}
}

// ping speaks zPING itself rather than through package clamav, so the
// harness does not depend on the code it is used to test.
func (c *Clamd) ping(network, addr string) error {
	conn, err := net.DialTimeout(network, addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("zPING\x00")); err != nil {
		return err
	}
	buf := make([]byte, 16)
	n, err := conn.Read(buf)
	if string(buf[:n]) == "PONG\x00" {
		return nil
	}
	return fmt.Errorf("ping %s: reply %q, %v", addr, buf[:n], err)
}

// Stop terminates clamd and waits for it to exit. It is safe to call more
// than once; Start's cleanup calls it too.
func (c *Clamd) Stop() {
	c.stopOnce.Do(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	})
}

// Log returns clamd's output and log file so far.
func (c *Clamd) Log() string {
	var b strings.Builder
	b.WriteString(c.out.String())
	if data, err := os.ReadFile(filepath.Join(c.Dir, "clamd.log")); err == nil {
		b.WriteString("--- clamd.log ---\n")
		b.Write(data)
	} else if !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(&b, "read clamd.log: %v\n", err)
	}
	return b.String()
}

// lockedBuffer collects clamd's stdout and stderr, which exec copies from
// two goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
