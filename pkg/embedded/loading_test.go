package embedded

import (
	"bufio"
	"bytes"
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
	const keys = 2_000_000
	dir := t.TempDir()
	// A pre-7 single-file AOF, which redis-server 7 loads (and converts):
	// two million SETs, about three seconds of loading here, answering
	// -LOADING every 2 MB.
	f, err := os.Create(filepath.Join(dir, "appendonly.aof"))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	line := []byte("*3\r\n$3\r\nSET\r\n$8\r\nk0000000\r\n$1\r\nv\r\n")
	at := bytes.Index(line, []byte("k0000000")) + 1
	for i := range keys {
		copy(line[at:at+7], fmt.Appendf(nil, "%07d", i))
		if _, err := bw.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// Long enough for redis-server to start listening on a loaded machine,
	// short against the loading.
	const timeout = 500 * time.Millisecond
	began := time.Now()
	r := startRedis(t, RedisOptions{DataDir: dir, Binary: redisBinary, StartTimeout: timeout})
	took := time.Since(began)
	n, err := redisClient(t, r).DBSize(context.Background()).Result()
	if err != nil || n != keys {
		t.Fatalf("DBSIZE after start = %d, %v; want %d", n, err, keys)
	}
	t.Logf("started in %s while loading %d keys", took, keys)
	if took < timeout {
		t.Errorf("start took %s: loading did not outlast StartTimeout, so the test shows nothing", took)
	}
}
