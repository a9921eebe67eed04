package embedded

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A standalone restarted on a large append-only file waits for redis-server
// to load it, however long past StartTimeout that takes: the child answers
// -LOADING meanwhile, and a live child is not a failed start.
func TestRedisServerWaitsWhileLoading(t *testing.T) {
	requireRedisServer(t)
	const keys = 1_000_000
	dir := t.TempDir()
	// A pre-7 single-file AOF, which redis-server 7 loads (and converts):
	// a million SETs, about a second of loading here, answering -LOADING
	// every 2 MB.
	f, err := os.Create(filepath.Join(dir, "appendonly.aof"))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	for i := range keys {
		k := fmt.Sprintf("k%07d", i)
		fmt.Fprintf(bw, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nv\r\n", len(k), k)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	const timeout = 200 * time.Millisecond
	began := time.Now()
	r := startRedis(t, RedisOptions{DataDir: dir, Binary: redisBinary, StartTimeout: timeout})
	took := time.Since(began)
	n, err := redisClient(t, r).DBSize(context.Background()).Result()
	if err != nil || n != keys {
		t.Fatalf("DBSIZE after start = %d, %v; want %d", n, err, keys)
	}
	if took < 2*timeout {
		t.Errorf("start took %s: loading did not outlast StartTimeout, so the test shows nothing", took)
	}
}
