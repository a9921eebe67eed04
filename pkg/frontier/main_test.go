package frontier

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		// Re-executed by TestConcurrentProcesses as a worker process.
		os.Exit(runChild())
	}
	goleak.VerifyTestMain(m)
}
