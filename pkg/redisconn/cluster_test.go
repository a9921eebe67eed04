package redisconn

import (
	"context"
	"flag"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

func TestClusterConfig(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"-redis", "10.0.0.1:7000, 10.0.0.2:7000,10.0.0.3:7000"}); err != nil {
		t.Fatal(err)
	}
	if !c.IsCluster() || len(c.Addrs()) != 3 || c.Addrs()[1] != "10.0.0.2:7000" {
		t.Fatalf("several addresses: cluster %v, addrs %q", c.IsCluster(), c.Addrs())
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if s := c.String(); !strings.Contains(s, "cluster=") {
		t.Errorf("String() = %s, want it to say cluster", s)
	}
	one := Config{Addr: "r:7000", Cluster: true}
	if !one.IsCluster() || one.Validate() != nil {
		t.Errorf("-redis-cluster with one address: cluster %v, %v", one.IsCluster(), one.Validate())
	}
	tests := []struct {
		c    Config
		want string
	}{
		{Config{Addr: "a:1,b"}, `address "b": want host:port`},
		{Config{Addr: "a:1,b:2", DB: 1}, "only has database 0"},
		{Config{Addr: "a:1", Cluster: true, DB: 2}, "only has database 0"},
		{Config{Addr: ","}, "want host:port"},
	}
	for _, tc := range tests {
		if err := tc.c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%s) = %v, want %q", tc.c, err, tc.want)
		}
	}
	if _, err := Open(context.Background(), Config{Addr: "a:1,b:2"}); err == nil || !strings.Contains(err.Error(), "OpenUniversal") {
		t.Errorf("Open of a cluster config = %v, want a pointer to OpenUniversal", err)
	}
}

// One address without -redis-cluster is a plain client, as Open's.
func TestOpenUniversalSingle(t *testing.T) {
	m := miniredis.RunT(t)
	c, err := OpenUniversal(context.Background(), Config{Addr: m.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, ok := c.(*redis.Client); !ok {
		t.Fatalf("OpenUniversal(one address) = %T, want *redis.Client", c)
	}
}

// OpenUniversal waits until the cluster serves every slot: a node without
// slots answers PING but reports cluster_state:fail.
func TestOpenUniversalWaitsForClusterState(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", port, "--dir", t.TempDir(),
		"--cluster-enabled", "yes", "--save", "", "--appendonly", "no", "--logfile", "")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ctx := context.Background()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cfg := Config{Addr: addr, Cluster: true}
	if c, err := OpenUniversal(short, cfg); err == nil {
		_ = c.Close()
		t.Fatal("OpenUniversal returned while no slot was served")
	} else if !strings.Contains(err.Error(), "cluster_state:fail") {
		t.Fatalf("OpenUniversal = %v, want the cluster state in the error", err)
	}
	// Without a deadline, a node that answers but whose cluster does not
	// serve is alive (a master of it may be loading its data): the wait
	// outlasts the stall bound and ends when the cluster serves.
	type opened struct {
		c   redis.UniversalClient
		err error
	}
	done := make(chan opened, 1)
	const stall = 200 * time.Millisecond
	go func() {
		c, err := OpenUniversal(ctx, cfg, withStall(stall))
		done <- opened{c, err}
	}()
	for began := time.Now(); time.Since(began) < 5*stall; time.Sleep(10 * time.Millisecond) { // letting the stall bound pass
		select {
		case o := <-done:
			t.Fatalf("OpenUniversal returned while the cluster did not serve: %v", o.err)
		default:
		}
	}
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer func() { _ = admin.Close() }()
	if err := admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err(); err != nil {
		t.Fatal(err)
	}
	o := <-done
	c, err := o.c, o.err
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, ok := c.(*redis.ClusterClient); !ok {
		t.Fatalf("OpenUniversal(cluster) = %T, want *redis.ClusterClient", c)
	}
	if err := c.Set(ctx, "{t}:k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
}
