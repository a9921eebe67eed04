package refusedport

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
)

func TestPortRefusesAndStaysReserved(t *testing.T) {
	port := Port(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		_ = ln.Close()
		t.Fatalf("listen on %s succeeded; the port is not reserved", addr)
	}
}
