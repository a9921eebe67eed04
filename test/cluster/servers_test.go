package cluster_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/redisconf"
)

// node is one redis-server of the test cluster: its port and data
// directory stay the same across a restart, so it comes back with its
// nodes.conf (its identity and slots) and its append-only file.
type node struct {
	addr, dir string
	cmd       *exec.Cmd
}

// start runs the node's redis-server. The append-only file is written at
// every write (appendfsync always), so a SIGKILL loses nothing the server
// acknowledged: what the test checks is the crawl's, not the disk's,
// behaviour across the restart.
func (n *node) start(t *testing.T) {
	t.Helper()
	_, port, _ := net.SplitHostPort(n.addr)
	n.cmd = exec.Command("redis-server", "--bind", "127.0.0.1", "--port", port, "--dir", n.dir,
		"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "15000",
		"--appendonly", "yes", "--appendfsync", "always", "--save", "", "--logfile", "redis.log")
	n.cmd.Args = append(n.cmd.Args, redisconf.Args()...)
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "redis-server "+n.addr+" answering", func() bool {
		c := redis.NewClient(&redis.Options{Addr: n.addr, MaxRetries: -1})
		defer func() { _ = c.Close() }()
		return c.Ping(context.Background()).Err() == nil
	})
}

// kill stops the node with SIGKILL, as a crash does.
func (n *node) kill(t *testing.T) {
	t.Helper()
	if n.cmd == nil || n.cmd.ProcessState != nil {
		return
	}
	if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = n.cmd.Wait()
}

func (n *node) logTail() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "redis.log"))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// startCluster starts three masters on loopback and joins them with
// redis-cli --cluster create, no replicas.
func startCluster(t *testing.T) []*node {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("no %s", bin)
		}
	}
	nodes := make([]*node, 3)
	var addrs []string
	for i := range nodes {
		// A cluster node also listens on port+10000 (the cluster bus), so
		// the port is picked below 55535 with both free.
		nodes[i] = &node{addr: freeClusterAddr(t), dir: t.TempDir()}
		nodes[i].start(t)
		n := nodes[i]
		t.Cleanup(func() { n.kill(t) })
		addrs = append(addrs, n.addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, n := range nodes {
		waitClusterOK(t, n.addr)
	}
	return nodes
}

// waitClusterOK waits until addr sees every slot served.
func waitClusterOK(t *testing.T, addr string) {
	t.Helper()
	waitFor(t, 60*time.Second, "cluster_state:ok on "+addr, func() bool {
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer func() { _ = c.Close() }()
		info, err := c.ClusterInfo(context.Background()).Result()
		return err == nil && strings.Contains(info, "cluster_state:ok")
	})
}

// freeClusterAddr finds a loopback port that is free together with its
// cluster bus port.
func freeClusterAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if port > 55535 {
			continue
		}
		bus, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+10000))
		if err != nil {
			continue
		}
		_ = bus.Close()
		return fmt.Sprintf("127.0.0.1:%d", port)
	}
	t.Fatal("no free port pair for a cluster node")
	return ""
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}
