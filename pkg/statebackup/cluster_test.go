package statebackup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/rdbsync"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// startCluster runs n redis-server cluster masters, each owning an nth
// of the slots, and returns a client once the cluster is ok.
func startCluster(t *testing.T, n int) *redis.ClusterClient {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("needs redis-server")
	}
	ctx := context.Background()
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		_, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", port, "--dir", t.TempDir(),
			"--cluster-enabled", "yes", "--save", "", "--appendonly", "no", "--logfile", "")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		addrs = append(addrs, addr)
	}
	nodes := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		nodes[i] = redis.NewClient(&redis.Options{Addr: a})
		t.Cleanup(func() { _ = nodes[i].Close() })
		for deadline := time.Now().Add(10 * time.Second); nodes[i].Ping(ctx).Err() != nil; time.Sleep(20 * time.Millisecond) { // polling the start
			if time.Now().After(deadline) {
				t.Fatalf("redis-server %s did not start", a)
			}
		}
		lo, hi := i*16384/n, (i+1)*16384/n-1
		if err := nodes[i].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range addrs[1:] {
		host, port, _ := net.SplitHostPort(a)
		if err := nodes[0].Do(ctx, "CLUSTER", "MEET", host, port).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) { // polling the cluster state
		ok := true
		for _, node := range nodes {
			info, _ := node.ClusterInfo(ctx).Result()
			ok = ok && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", n))
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cluster did not come up")
		}
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// A Redis Cluster backup holds one RDB per master, which together hold
// every key; restoring it into a standalone data directory is refused
// with the reason.
func TestBackupClusterOneRDBPerMaster(t *testing.T) {
	ctx := context.Background()
	cc := startCluster(t, 3)
	putRecent(t, cc, 300)
	want, err := keyCount(ctx, cc)
	if err != nil {
		t.Fatal(err)
	}
	masters, err := Masters(ctx, cc)
	if err != nil || len(masters) != 3 {
		t.Fatalf("masters %v, %v", masters, err)
	}
	o := BackupOptions{Out: filepath.Join(t.TempDir(), "b"), Redis: cc}
	for _, a := range masters {
		o.Masters = append(o.Masters, rdbsync.Options{Addr: a})
	}
	m, err := Backup(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Redis) != 3 {
		t.Fatalf("%d snapshots", len(m.Redis))
	}
	// Each snapshot, loaded alone, holds its master's keys: together all.
	var got int64
	for _, s := range m.Redis {
		raw, err := os.ReadFile(filepath.Join(o.Out, s.File))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := rdbsync.CheckFile(bytes.NewReader(raw)); err != nil {
			t.Fatalf("%s: %v", s.File, err)
		}
		got += countKeys(t, raw)
	}
	if got != want || want < 64 {
		t.Fatalf("snapshots hold %d keys, the cluster %d", got, want)
	}
	_, err = Restore(ctx, RestoreOptions{From: o.Out, DataDir: filepath.Join(t.TempDir(), "data")})
	if err == nil || !strings.Contains(err.Error(), "3 Redis masters") {
		t.Fatalf("restore of a cluster backup into a standalone directory: %v", err)
	}
}

// countKeys loads an RDB into a private redis-server and counts its keys.
func countKeys(t *testing.T, rdb []byte) int64 {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), rdb, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	_ = ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", port, "--dir", dir, "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) { // polling the load
		if n, err := c.DBSize(context.Background()).Result(); err == nil {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not load the snapshot")
		}
	}
}

// A Redis Cluster's backup restores into a running cluster of another
// layout (two masters for three): every key lands on the master that
// owns its slot there, with its time to live; the backup's pause is
// undone and the URIs in flight at the snapshot are queued again; the
// index goes to the cdxwriter's directory; and a target that holds keys
// is refused.
func TestRestoreClusterIntoAnotherLayout(t *testing.T) {
	ctx := context.Background()
	src := startCluster(t, 3)
	f, err := frontier.New(src, "fc-npld", frontier.Options{Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.RecordLayout(ctx); err != nil {
		t.Fatal(err)
	}
	queueURIs(t, f, 60, 4)
	putRecent(t, src, 300)
	if err := src.Set(ctx, "trawler:test:expiring", "v", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	// Keys whose time to live runs out over the next seconds, some of
	// them while the restore copies them: not counted as missing.
	pipe := src.Pipeline()
	for i := range 3000 {
		pipe.Set(ctx, fmt.Sprintf("trawler:test:short:%d", i), "v", time.Duration(i+1)*time.Millisecond)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	_, cdxURL := serveIndex(t, 250)
	masters, err := Masters(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	o := BackupOptions{Out: filepath.Join(t.TempDir(), "b"), Redis: src, Frontiers: []*frontier.Frontier{f},
		DrainTimeout: 300 * time.Millisecond, CDXURL: cdxURL, CDXToken: testToken, Version: "test"}
	for _, a := range masters {
		o.Masters = append(o.Masters, rdbsync.Options{Addr: a})
	}
	if _, err := Backup(ctx, o); err != nil {
		t.Fatal(err)
	}

	dst := startCluster(t, 2)
	indexDir := filepath.Join(t.TempDir(), "cdx", "index")
	rep, err := RestoreTo(ctx, RestoreToOptions{From: o.Out, Redis: dst, IndexDir: indexDir})
	if err != nil {
		t.Fatal(err)
	}
	// The snapshots also hold the backup's pause of the frontier, a mark
	// per shard, which the restore removes; and fewer of the short-lived
	// keys as time goes on.
	want, err := keyCount(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Keys < want+3 || rep.Released != 4 || rep.CDXCounts["fc"] != 250 {
		t.Fatalf("report: %d keys (want at least %d and 3 pause marks), %d released (want 4), index %v", rep.Keys, want, rep.Released, rep.CDXCounts)
	}
	shards, err := frontier.RecordedShards(ctx, dst, "fc-npld")
	if err != nil || shards != 3 {
		t.Fatalf("recorded shards %d, %v", shards, err)
	}
	fd, err := frontier.New(dst, "fc-npld", frontier.Options{Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := fd.Stats(ctx); err != nil || st.Paused || st.InFlight != 0 || st.Queued != 60 {
		t.Fatalf("restored frontier %+v, %v: want 60 queued, none in flight, not paused", st, err)
	}
	// Its hosts are read shard by shard, each from its master.
	byHost, err := fd.QueuedByHostName(ctx)
	var sum int64
	for _, n := range byHost {
		sum += n
	}
	if err != nil || len(byHost) != 7 || sum != 60 {
		t.Fatalf("queued by host on the restored cluster: %v (%d in all), %v", byHost, sum, err)
	}
	// The restored frontier is crawled as the old one was.
	if cl, _, err := fd.Claim(ctx, 60, time.Minute); err != nil || len(cl) == 0 {
		t.Fatalf("claim from the restored frontier: %d, %v", len(cl), err)
	}
	dbd, err := recentdb.New(dst, recentdb.Options{Crawl: "fc", Stream: "npld"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := dbd.Lookup(ctx, []string{"http://example.org/0", "http://example.org/299"})
	if err != nil || !got[0].Found() || !got[1].Found() {
		t.Fatalf("recently-crawled DB after the restore: %+v, %v", got, err)
	}
	if ttl, err := dst.PTTL(ctx, "trawler:test:expiring").Result(); err != nil || ttl <= 0 || ttl > time.Hour {
		t.Fatalf("time to live after the restore: %v, %v", ttl, err)
	}
	ix, err := cdxindex.Open(indexDir, cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := ix.Count("fc")
	_ = ix.Close()
	if n != 250 {
		t.Fatalf("restored index: %d entries", n)
	}
	if _, err := os.Stat(indexDir + ".restoring"); !os.IsNotExist(err) {
		t.Fatalf("staging directory left: %v", err)
	}

	// Again: the target holds keys now.
	_, err = RestoreTo(ctx, RestoreToOptions{From: o.Out, Redis: dst})
	if !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("restore into a cluster holding keys: %v", err)
	}
}
