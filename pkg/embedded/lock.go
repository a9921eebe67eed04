package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrDataDirInUse is returned when another process (or another server in this
// process) already holds a data directory.
var ErrDataDirInUse = errors.New("data directory in use")

// lockFileName is the advisory lock file kept in every data directory.
const lockFileName = "trawler.lock"

// dirLock is an exclusive flock on a data directory's lock file. The kernel
// drops it when the holder dies, so a crashed run never leaves a stale lock.
type dirLock struct {
	f *os.File
}

// lockDir creates dir if needed and takes its lock without waiting.
func lockDir(dir string) (*dirLock, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create data dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readHolder(f)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is locked by %s (lock file %s)", ErrDataDirInUse, dir, holder, path)
		}
		return nil, fmt.Errorf("lock data dir %s: %w", dir, err)
	}
	// The pid is only informative (for the error above and for operators);
	// the flock is what excludes.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

// readHolder describes who holds the lock, from the pid its holder wrote.
func readHolder(f *os.File) string {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid := strings.TrimSpace(string(buf[:n]))
	if _, err := strconv.Atoi(pid); err != nil {
		return "another process"
	}
	if pid == strconv.Itoa(os.Getpid()) {
		return "this process (pid " + pid + ")"
	}
	return "pid " + pid
}

// unlock releases the lock. Closing the descriptor drops the flock.
func (l *dirLock) unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("release data dir lock: %w", err)
	}
	return nil
}
