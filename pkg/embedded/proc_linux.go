package embedded

import "syscall"

// childSysProcAttr makes the child die with us (SIGTERM, so redis-server
// still fsyncs its append-only file) and puts it in its own process group,
// so a Ctrl-C aimed at trawler does not stop Redis before trawler has
// finished its own orderly shutdown.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
}
