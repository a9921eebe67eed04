package redisconn

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/trawler-crawl/trawler/pkg/embedded"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const secret = "s3cret-Pa55"

func TestFlags(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if c != (Config{Addr: DefaultAddr}) {
		t.Errorf("defaults = %+v", c)
	}
	if err := fs.Parse([]string{"-redis", "redis:6380", "-redis-password", secret, "-redis-db", "3"}); err != nil {
		t.Fatal(err)
	}
	if c.Addr != "redis:6380" || c.Password != secret || c.DB != 3 {
		t.Errorf("parsed = %s (db %d)", c.Addr, c.DB)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		c    Config
		want string
	}{
		{Config{Addr: "redis"}, `address "redis": want host:port`},
		{Config{Addr: ":6379"}, "empty host"},
		{Config{Addr: "r:0"}, "not a number from 1 to 65535"},
		{Config{Addr: "r:port"}, "not a number from 1 to 65535"},
		{Config{Addr: "r:6379", DB: -1}, "database -1 is negative"},
		{Config{Addr: "[::1]:6379", DB: 15}, ""},
	}
	for _, tc := range tests {
		err := tc.c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Validate(%s) = %v", tc.c, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Validate(%s) = %v, want error containing %q", tc.c, err, tc.want)
		}
	}
	if _, err := Open(context.Background(), Config{Addr: "nope"}); err == nil {
		t.Error("Open accepted an invalid config")
	}
}

func TestPasswordNeverPrinted(t *testing.T) {
	c := Config{Addr: "127.0.0.1:6379", Password: secret, DB: 2}
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
		slog.New(h).Info("config", "redis", c, "ptr", &c)
	}
	outputs := map[string]string{
		"%v": fmt.Sprintf("%v", c), "%+v": fmt.Sprintf("%+v", c), "%#v": fmt.Sprintf("%#v", c),
		"%s": fmt.Sprintf("%s", c), //lint:ignore S1025 the %s verb itself is under test "%v ptr": fmt.Sprintf("%v", &c), "slog": logs.String(),
	}
	for verb, out := range outputs {
		if strings.Contains(out, secret) {
			t.Errorf("%s prints the password: %s", verb, out)
		}
		if !strings.Contains(out, redacted) || !strings.Contains(out, "127.0.0.1:6379") {
			t.Errorf("%s should show the address and that a password is set: %s", verb, out)
		}
	}
	if s := (Config{Addr: "a:1"}).String(); strings.Contains(s, redacted) {
		t.Errorf("no password set, yet %q claims one", s)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func TestOpenWaitsForLateServer(t *testing.T) {
	if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type result struct {
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := Open(ctx, Config{Addr: addr, DB: 1})
		if err == nil {
			err = c.Set(ctx, "k", "v", 0).Err()
			_ = c.Close()
		}
		done <- result{err}
	}()
	// Nothing listens yet, so Open cannot have succeeded.
	select {
	case r := <-done:
		t.Fatalf("Open returned before the server existed: %v", r.err)
	default:
	}
	srv, err := embedded.StartRedis(ctx, embedded.RedisOptions{DataDir: t.TempDir(), Addr: addr, Binary: "/usr/bin/redis-server"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if r := <-done; r.err != nil {
		t.Fatalf("Open after the server started: %v", r.err)
	}
}

func TestOpenFailures(t *testing.T) {
	mini := miniredis.NewMiniRedis()
	if err := mini.Start(); err != nil {
		t.Fatal(err)
	}
	defer mini.Close()
	mini.RequireAuth(secret)

	tests := []struct {
		name    string
		cfg     Config
		timeout time.Duration
		want    []string
		fast    bool // must fail well before the deadline: retrying cannot help
	}{
		{"nobody listening", Config{Addr: freeAddr(t)}, 300 * time.Millisecond, []string{"not answering", "deadline exceeded", "connection refused"}, false},
		{"wrong password", Config{Addr: mini.Addr(), Password: "wrong"}, 10 * time.Second, []string{mini.Addr(), "WRONGPASS"}, true},
		{"no password", Config{Addr: mini.Addr()}, 10 * time.Second, []string{"NOAUTH"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			start := time.Now()
			c, err := Open(ctx, tc.cfg)
			if err == nil {
				_ = c.Close()
				t.Fatal("Open succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "wrong") || strings.Contains(err.Error(), secret) {
				t.Errorf("error leaks a password: %v", err)
			}
			if tc.fast && time.Since(start) > tc.timeout/2 {
				t.Errorf("took %s: a permanent error must not be retried until the deadline", time.Since(start))
			}
		})
	}

	ok, err := Open(context.Background(), Config{Addr: mini.Addr(), Password: secret})
	if err != nil {
		t.Fatalf("Open with the right password: %v", err)
	}
	_ = ok.Close()
}

func TestOpenBadDatabaseFailsFast(t *testing.T) {
	if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := embedded.StartRedis(ctx, embedded.RedisOptions{DataDir: t.TempDir(), Binary: "/usr/bin/redis-server"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	start := time.Now()
	c, err := Open(ctx, Config{Addr: srv.Addr(), DB: 99}) // redis-server has 16 databases
	if err == nil {
		_ = c.Close()
		t.Fatal("Open succeeded on database 99")
	}
	if !strings.Contains(err.Error(), "DB index") || time.Since(start) > 5*time.Second {
		t.Errorf("Open = %v after %s, want a prompt DB index error", err, time.Since(start))
	}
}
