// Package testchild runs part of a test in a child process: the test
// binary itself, started again with the part's spec (JSON) in an
// environment variable, so the test can kill -9 it, restart it, or run
// several side by side as a fleet's processes.
package testchild

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// Main belongs in TestMain, before m.Run: in a child (env set) it decodes
// the spec, exits with run's code and never returns; in the test itself
// it returns at once.
func Main[S any](env string, run func(S) int) {
	raw, ok := os.LookupEnv(env)
	if !ok || raw == "" {
		return
	}
	var spec S
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "child spec in %s: %v\n", env, err)
		os.Exit(2)
	}
	os.Exit(run(spec))
}

// Command is the child's command, not started: the test binary, running
// no tests, with spec under env.
func Command(env string, spec any) (*exec.Cmd, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("child spec: %w", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+string(b))
	return cmd, nil
}

// Child is a started child process. Its Wait may be called any number of
// times, from any goroutines: the first call waits for the process, the
// others for that call's result, so a test's own wait (with a timeout, in
// a goroutine) and its cleanup's do not race.
type Child struct {
	*exec.Cmd
	once sync.Once
	err  error
}

// Wait waits for the process to exit and returns its exit error.
func (c *Child) Wait() error {
	c.once.Do(func() { c.err = c.Cmd.Wait() })
	return c.err
}

// Start starts the child with its stderr to stderr. A child still
// running when the test ends is killed and waited for.
func Start(t testing.TB, env string, spec any, stderr io.Writer) *Child {
	t.Helper()
	cmd, err := Command(env, spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	c := &Child{Cmd: cmd}
	t.Cleanup(func() {
		_ = c.Process.Kill() // fails, harmlessly, once it has exited
		_ = c.Wait()
	})
	return c
}
