package admin

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestEndpoints(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_test_total", Help: "t"})
	reg.MustRegister(c)
	c.Add(3)
	s, err := Listen("127.0.0.1:0", reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	base := "http://" + s.Addr()
	if code, body := get(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("healthz %d %q", code, body)
	}
	if code, body := get(t, base+"/metrics"); code != 200 || !strings.Contains(body, "trawler_test_total 3") {
		t.Fatalf("metrics %d %q", code, body)
	}
	if code, _ := get(t, base+"/readyz"); code != 200 {
		t.Fatalf("readyz with no checks: %d", code)
	}
	s.AddReadyCheck("redis", func(context.Context) error { return errors.New("connection refused") })
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "redis: connection refused") {
		t.Fatalf("readyz failing: %d %q", code, body)
	}
}

func TestListenBadAddr(t *testing.T) {
	if _, err := Listen("256.0.0.1:x", prometheus.NewRegistry(), slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("want error for bad address")
	}
}
