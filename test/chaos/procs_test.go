//go:build chaos

package chaos_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/testchild"
)

// proc is one child process of the suite (a worker or the cdxwriter). Its
// stderr goes to a file in the run directory, appended across restarts,
// so a long run keeps every log line without holding them in memory.
type proc struct {
	spec childSpec
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // Wait's result, once done is closed
}

func newProc(t *testing.T, spec childSpec, logDir string) *proc {
	p := &proc{spec: spec, log: filepath.Join(logDir, spec.Role+"-"+spec.ID+".log")}
	t.Cleanup(p.kill) // a failed or timed-out run leaves no process behind
	return p
}

// start runs the child; it returns once the process exists.
func (p *proc) start(t *testing.T) {
	t.Helper()
	cmd, err := testchild.Command(childEnv, p.spec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("child log: %v", err)
	}
	fmt.Fprintf(f, "=== start %s\n", time.Now().UTC().Format(time.RFC3339Nano))
	cmd.Stdout, cmd.Stderr = f, f
	// A test binary killed by go test's -timeout runs no t.Cleanup: the
	// kernel then kills the children, so nothing outlives the suite.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		t.Fatalf("start %s %s: %v", p.spec.Role, p.spec.ID, err)
	}
	p.cmd, p.done, p.err = cmd, make(chan struct{}), nil
	done := p.done
	go func() {
		err := cmd.Wait()
		_ = f.Close()
		p.err = err
		close(done)
	}()
}

// running says whether the process is alive; an exit nobody asked for is
// a finding the caller reports.
func (p *proc) running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL, as a crash or an OOM kill does, and waits for the
// process to be gone.
func (p *proc) kill() {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop asks for an orderly shutdown (SIGTERM: finish in-flight URIs,
// close WARCs, commit offsets) and waits up to d, then kills.
func (p *proc) stop(d time.Duration) error {
	if !p.running() {
		return p.err
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		p.kill()
		return fmt.Errorf("%s %s did not stop within %v", p.spec.Role, p.spec.ID, d)
	}
}

// tail is the end of the child's log, for failure messages.
func (p *proc) tail(n int) string {
	b, _ := os.ReadFile(p.log)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
