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

// instructionCounter counts the instructions and cycles of all online CPUs,
// in user and kernel mode, whoever runs them: the crawl's process, its
// redis-server and the kernel's work for both. Unlike CPU time, the
// instruction count hardly changes with a VM's speed, which drifts by up
// to 2x within minutes, so two builds can be compared in runs far apart.
// Cycles follow time more closely (they leave out time the hypervisor
// takes, not the stalls a busy neighbour causes), and instructions per
// cycle tell cheap work from expensive.
type instructionCounter struct {
	fds    []int // instruction counters, one per CPU
	cycles []int // cycle counters, one per CPU
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
		for _, ev := range []struct {
			config uint64
			fds    *[]int
		}{{unix.PERF_COUNT_HW_INSTRUCTIONS, &c.fds}, {unix.PERF_COUNT_HW_CPU_CYCLES, &c.cycles}} {
			attr := unix.PerfEventAttr{
				Type:   unix.PERF_TYPE_HARDWARE,
				Config: ev.config,
				Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
			}
			fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if err != nil {
				c.close()
				return nil, fmt.Errorf("bench: count instructions on cpu %d: %w", cpu, err)
			}
			*ev.fds = append(*ev.fds, fd)
		}
	}
	return c, nil
}

// stop returns the instructions and cycles counted so far and closes the
// counters.
func (c *instructionCounter) stop() (instructions, cycles uint64, err error) {
	defer c.close()
	if instructions, err = sumCounters(c.fds); err == nil {
		cycles, err = sumCounters(c.cycles)
	}
	return instructions, cycles, err
}

func sumCounters(fds []int) (uint64, error) {
	var total uint64
	buf := make([]byte, 8)
	for _, fd := range fds {
		if n, err := unix.Read(fd, buf); err != nil || n != len(buf) {
			return 0, fmt.Errorf("bench: read perf counter: %d bytes, %v", n, err)
		}
		total += binary.NativeEndian.Uint64(buf)
	}
	return total, nil
}

func (c *instructionCounter) close() {
	for _, fd := range append(c.fds, c.cycles...) {
		_ = unix.Close(fd)
	}
	c.fds, c.cycles = nil, nil
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
