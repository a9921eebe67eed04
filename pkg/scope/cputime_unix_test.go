//go:build unix

package scope

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time, so that benchmarks can
// report work done independently of how busy the (shared) machine is.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
