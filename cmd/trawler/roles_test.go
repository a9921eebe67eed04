package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/trawler-crawl/trawler/internal/refusedport"
	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
)

// A role is not ready while it waits for Redis (which can be minutes for
// one loading its data), though its admin listener answers.
func TestNotReadyWhileWaitingForRedis(t *testing.T) {
	adm, err := admin.Listen("127.0.0.1:0", prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adm.Close() })
	env := &roleEnv{log: slog.New(slog.DiscardHandler), admin: adm}
	nobody := "127.0.0.1:" + strconv.Itoa(refusedport.Port(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := env.openRedis(ctx, redisconn.Config{Addr: nobody})
		done <- err
	}()
	readyz := func() (int, string) {
		resp, err := http.Get("http://" + adm.Addr() + "/readyz")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) { // polling the listener
		code, body := readyz()
		if code == http.StatusServiceUnavailable && strings.Contains(body, "waiting for Redis") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz while waiting for Redis: %d %q", code, body)
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("openRedis succeeded with nobody listening")
	}
}
