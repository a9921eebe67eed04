package rdbsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/trawler-crawl/trawler/internal/refusedport"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

// startRedis runs a real redis-server for one test.
func startRedis(t *testing.T) (*redis.Client, string) {
	t.Helper()
	r, rdb := embeddedtest.RedisServer(t, t.TempDir())
	return rdb, r.Addr()
}

func TestCRC64Jones(t *testing.T) {
	// The check value of CRC-64/Jones as redis's src/crc64.c tests it.
	if got := crcUpdate(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %016x, want e9c6d914c4b8d9ca", got)
	}
}

func TestFetchDiskAndDiskless(t *testing.T) {
	ctx := context.Background()
	rdb, addr := startRedis(t)
	for i := range 2000 {
		rdb.Set(ctx, fmt.Sprintf("k%d", i), strings.Repeat("v", i%300), 0)
	}
	if err := rdb.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	for _, diskless := range []bool{false, true} {
		var buf bytes.Buffer
		info, err := Fetch(ctx, Options{Addr: addr, Diskless: diskless}, &buf)
		if err != nil {
			t.Fatalf("diskless=%v: %v", diskless, err)
		}
		if info.Diskless != diskless || info.Size != int64(buf.Len()) || info.RDBVersion < 9 || info.Checksum == 0 || info.ReplID == "" {
			t.Fatalf("diskless=%v: info %+v, %d bytes", diskless, info, buf.Len())
		}
		if _, _, err := CheckFile(bytes.NewReader(buf.Bytes())); err != nil {
			t.Fatal(err)
		}
		// A cut or altered copy is caught.
		if _, _, err := CheckFile(bytes.NewReader(buf.Bytes()[:buf.Len()-100])); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated: %v", err)
		}
		bad := bytes.Clone(buf.Bytes())
		bad[len(bad)/2] ^= 0x55
		if _, _, err := CheckFile(bytes.NewReader(bad)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipped byte: %v", err)
		}
	}
	// The server is still a plain master serving clients.
	if err := rdb.Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestFetchRefusals(t *testing.T) {
	ctx := context.Background()
	rdb, addr := startRedis(t)
	// A user that may read but not replicate: the server refuses PSYNC.
	if err := rdb.Do(ctx, "ACL", "SETUSER", "reader", "on", ">secret", "~*", "+@all", "-psync", "-sync").Err(); err != nil {
		t.Fatal(err)
	}
	_, err := Fetch(ctx, Options{Addr: addr, Username: "reader", Password: "secret"}, &bytes.Buffer{})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "PSYNC") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("PSYNC without permission: %v", err)
	}
	_, err = Fetch(ctx, Options{Addr: addr, Username: "reader", Password: "wrong"}, &bytes.Buffer{})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "AUTH") {
		t.Fatalf("bad password: %v", err)
	}
	// Nobody listens on a port we just closed.
	dead := "127.0.0.1:" + strconv.Itoa(refusedport.Port(t))
	_, err = Fetch(ctx, Options{Addr: dead}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "connect") || !strings.Contains(err.Error(), dead) {
		t.Fatalf("unreachable: %v", err)
	}
}

// cuttingProxy forwards to addr and closes both sides once limit bytes
// have come back from the server: a connection lost mid-snapshot.
func cuttingProxy(t *testing.T, addr string, limit int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				_ = c.Close()
				return
			}
			go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
			go func() { _, _ = io.CopyN(c, s, limit); _ = c.Close(); _ = s.Close() }()
		}
	}()
	return ln.Addr().String()
}

// A connection cut in the middle of the payload is an error naming the
// byte it stopped at, in both forms.
func TestFetchCutMidSnapshot(t *testing.T) {
	ctx := context.Background()
	rdb, addr := startRedis(t)
	for i := range 3000 {
		rdb.Set(ctx, fmt.Sprintf("k%d", i), strings.Repeat("v", 200), 0)
	}
	_ = rdb.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err()
	for _, diskless := range []bool{false, true} {
		_, err := Fetch(ctx, Options{Addr: cuttingProxy(t, addr, 20000), Diskless: diskless}, io.Discard)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "snapshot payload at byte") {
			t.Fatalf("diskless=%v: cut connection: %v", diskless, err)
		}
		t.Logf("diskless=%v: %v", diskless, err)
	}
}
