// Package refusedport gives tests a loopback port that refuses connections
// for as long as the test runs.
//
// Closing a listener and reusing its port races with every other listener
// the test (or a parallel test) opens afterwards: the kernel may hand the
// same port out again, and the "dead" address then answers. A socket that is
// bound but never listens keeps the port reserved, and a connection to it is
// refused with a reset.
package refusedport

import (
	"syscall"
	"testing"
)

// Port returns a loopback TCP port held by a bound, non-listening socket;
// the socket is closed when the test ends.
func Port(t testing.TB) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("refused port: socket: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("refused port: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("refused port: getsockname: %v", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("refused port: address %T", sa)
	}
	return in4.Port
}
