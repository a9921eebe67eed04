package dns

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	noServers := filepath.Join(dir, "none.conf")
	if err := os.WriteFile(noServers, []byte("search example.org\nnameserver nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"bad server", Options{Servers: []string{"127.0.0.1:53", "dns.example:53"}}, `Servers[1]: name server "dns.example:53": want ip:port or ip`},
		{"port zero", Options{Servers: []string{"127.0.0.1:0"}}, "port 0"},
		{"negative timeout", Options{Timeout: -time.Second}, "must not be negative"},
		{"negative min validity", Options{MinValidity: -1}, "must not be negative"},
		{"missing resolv.conf", Options{ResolvConf: filepath.Join(dir, "missing.conf")}, "open resolv.conf"},
		{"no usable nameserver", Options{ResolvConf: noServers}, "none.conf: no usable nameserver line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseServer(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:5353":   "127.0.0.1:5353",
		"127.0.0.1":        "127.0.0.1:53",
		"[2001:db8::1]:54": "[2001:db8::1]:54",
		"2001:db8::1":      "[2001:db8::1]:53",
		"[2001:db8::1]":    "[2001:db8::1]:53",
	} {
		got, err := parseServer(in)
		if err != nil || got.String() != want {
			t.Errorf("parseServer(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
}
