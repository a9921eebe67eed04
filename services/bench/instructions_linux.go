package bench

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// instructionCounter counts the instructions all online CPUs retire, in
// user and kernel mode, whoever runs them: the crawl's process, its
// redis-server and the kernel's work for both. Unlike CPU time, the count
// hardly changes with a VM's speed, which drifts by up to 2x within
// minutes, so two builds can be compared in runs far apart.
type instructionCounter struct {
	fds []int
}

// startInstructions opens one counter per online CPU. It needs perf
// events for all processes (root, CAP_PERFMON or perf_event_paranoid <=
// 0) and a CPU the hypervisor exposes counters on; otherwise it fails.
func startInstructions() (*instructionCounter, error) {
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}
	c := &instructionCounter{}
	for _, cpu := range cpus {
		attr := unix.PerfEventAttr{
			Type:   unix.PERF_TYPE_HARDWARE,
			Config: unix.PERF_COUNT_HW_INSTRUCTIONS,
			Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		}
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("bench: count instructions on cpu %d: %w", cpu, err)
		}
		c.fds = append(c.fds, fd)
	}
	return c, nil
}

// stop returns the instructions counted so far and closes the counters.
func (c *instructionCounter) stop() (uint64, error) {
	defer c.close()
	var total uint64
	buf := make([]byte, 8)
	for _, fd := range c.fds {
		if n, err := unix.Read(fd, buf); err != nil || n != len(buf) {
			return 0, fmt.Errorf("bench: read instruction counter: %d bytes, %v", n, err)
		}
		total += binary.NativeEndian.Uint64(buf)
	}
	return total, nil
}

func (c *instructionCounter) close() {
	for _, fd := range c.fds {
		_ = unix.Close(fd)
	}
	c.fds = nil
}

// onlineCPUs reads the kernel's list of online CPUs, e.g. "0-3,6".
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("bench: online cpus: %w", err)
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		last := first
		if err == nil && isRange {
			last, err = strconv.Atoi(hi)
		}
		if err != nil || first < 0 || last < first {
			return nil, fmt.Errorf("bench: cpu list %q: bad part %q", s, part)
		}
		for cpu := first; cpu <= last; cpu++ {
			cpus = append(cpus, cpu)
		}
	}
	return cpus, nil
}
