//go:build !linux

package embedded

import "syscall"

// childSysProcAttr puts the child in its own process group. Only Linux can
// tie the child's life to ours; elsewhere the pid-file check in
// checkStaleRedis catches a child left behind by a crash.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
