package testchild

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/internal/testlog"
)

const env = "TRAWLER_TESTCHILD_TEST"

type spec struct {
	Say  string `json:"say"`
	Exit int    `json:"exit"`
}

func TestMain(m *testing.M) {
	Main(env, func(s spec) int {
		fmt.Fprint(os.Stderr, s.Say)
		return s.Exit
	})
	os.Exit(m.Run())
}

// The child gets its spec and its code is the process's.
func TestStartRunsTheSpec(t *testing.T) {
	out := &testlog.Buffer{}
	cmd := Start(t, env, spec{Say: "hello from the child", Exit: 3}, out)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("Wait = %v, want exit status 3", err)
	}
	if out.String() != "hello from the child" {
		t.Errorf("stderr = %q", out)
	}
}

// A spec that does not decode ends the child with status 2 and says why.
func TestBadSpec(t *testing.T) {
	cmd, err := Command(env, spec{})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, env+`={"exit": "three"}`) // the last value wins
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "child spec in "+env) {
		t.Fatalf("bad spec: %v, output %q", err, out)
	}
	if _, err := Command(env, func() {}); err == nil {
		t.Error("Command encoded a func")
	}
}
