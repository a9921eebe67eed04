package embedded

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/internal/testlog"
)

// helperEnv makes the test binary act as a parent process that starts
// redis-server and then waits to be killed (see TestRedisServerDiesWithParent).
const helperEnv = "TRAWLER_EMBEDDED_TEST_HELPER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		runRedisHelper(dir)
		return
	}
	goleak.VerifyTestMain(m)
}

// runRedisHelper starts redis-server in dir, prints its pid and blocks.
func runRedisHelper(dir string) {
	r, err := StartRedis(context.Background(), RedisOptions{DataDir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("%d\n", r.PID())
	select {}
}

// processAlive reports whether pid is a running (not zombie) process.
func processAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// Field 3, after the parenthesised command name, is the state.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	return s[i+2] != 'Z' && s[i+2] != 'X'
}

// logBuffer is the shared concurrency-safe test log sink.
type logBuffer = testlog.Buffer

// testLogger returns a logger writing to the returned buffer.
func testLogger() (*slog.Logger, *logBuffer) { return testlog.New(slog.LevelDebug) }
