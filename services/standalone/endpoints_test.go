package standalone

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestEndpointsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	e := Endpoints{PID: os.Getpid(), Redis: "127.0.0.1:6380", Kafka: []string{"127.0.0.1:9092"}, Admin: ":8443", CDX: "[::]:8081"}
	remove, err := writeEndpoints(dir, e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadEndpoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Admin != "127.0.0.1:8443" || got.CDX != "127.0.0.1:8081" || got.Redis != e.Redis || got.PID != e.PID {
		t.Fatalf("read back %+v", got)
	}
	remove()
	if _, err := ReadEndpoints(dir); err == nil || !strings.Contains(err.Error(), "no "+EndpointsFile) {
		t.Fatalf("after remove: %v", err)
	}
}

// A file that does not parse, lacks a field, or names a process that is
// gone does not pass for a running standalone.
func TestEndpointsBad(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, body, want string
	}{
		{"not json", "{pid: 1", "invalid character"},
		{"no redis", `{"pid": 1, "kafka": ["127.0.0.1:9092"]}`, "required"},
		{"no pid", `{"redis": "127.0.0.1:1", "kafka": ["127.0.0.1:9092"]}`, "required"},
		{"dead", `{"pid": ` + strconv.Itoa(gone.Process.Pid) + `, "redis": "127.0.0.1:1", "kafka": ["127.0.0.1:9092"]}`, "which is gone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, EndpointsFile), []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadEndpoints(dir); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestDialable(t *testing.T) {
	for in, want := range map[string]string{
		":8081": "127.0.0.1:8081", "0.0.0.0:1": "127.0.0.1:1", "[::]:2": "127.0.0.1:2",
		"10.0.0.5:3": "10.0.0.5:3", "localhost:4": "localhost:4", "garbage": "garbage",
	} {
		if got := dialable(in); got != want {
			t.Errorf("dialable(%q) = %q, want %q", in, got, want)
		}
	}
}
