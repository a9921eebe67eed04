package statebackup

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/rdbsync"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// startCluster runs three redis-server cluster masters, each owning a
// third of the slots, and returns a client once the cluster is ok.
func startCluster(t *testing.T) *redis.ClusterClient {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("needs redis-server")
	}
	ctx := context.Background()
	var addrs []string
	for range 3 {
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
		lo, hi := i*16384/3, (i+1)*16384/3-1
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
		for _, n := range nodes {
			info, _ := n.ClusterInfo(ctx).Result()
			ok = ok && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:3")
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
	cc := startCluster(t)
	db, err := recentdb.New(cc, recentdb.Options{Crawl: "fc", Stream: "npld"})
	if err != nil {
		t.Fatal(err)
	}
	var ups []recentdb.Update
	for i := range 300 {
		ups = append(ups, recentdb.Update{URL: fmt.Sprintf("http://example.org/%d", i),
			Capture: &recentdb.Capture{Time: time.Now().UTC().Truncate(time.Millisecond), Status: 200, Length: -1}})
	}
	if err := db.Put(ctx, ups); err != nil {
		t.Fatal(err)
	}
	var total atomic.Int64 // ForEachMaster runs the function on every master at once
	if err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		n, err := c.DBSize(ctx).Result()
		total.Add(n)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := total.Load()
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
