package testwait

import (
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	start := time.Now()
	n := 0
	Until(t, time.Second, "three polls", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("polled %d times", n)
	}
	ft := &fakeT{TB: t}
	Until(ft, 20*time.Millisecond, "never", func() bool { return false })
	if !ft.failed || time.Since(start) > 10*time.Second {
		t.Fatal("a condition that never holds did not fail the test")
	}
}

// fakeT records Fatalf instead of stopping the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
func (f *fakeT) Helper()               {}
