// Package testwait polls a condition in tests until it holds or a deadline
// passes, instead of sleeping for a guessed time.
package testwait

import (
	"testing"
	"time"
)

// Until polls cond every few milliseconds and fails the test, naming what
// it waited for, if cond does not hold within timeout.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
			return
		}
		<-tick.C
	}
}
