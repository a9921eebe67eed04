// Package redisconn holds the Redis connection settings every role shares
// and opens a go-redis client that is known to answer before the role
// starts: a plain client (Open), or a cluster client for a Redis Cluster
// (OpenUniversal). The password never reaches a log: Config redacts it
// when printed.
package redisconn

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults.
const (
	DefaultAddr = "127.0.0.1:6379"
	// DefaultOpenTimeout is how long Open waits for a sign of life when
	// its context has no deadline.
	DefaultOpenTimeout = 30 * time.Second
)

// redacted replaces a set password in printed configs.
const redacted = "[REDACTED]"

// Config is the Redis connection.
type Config struct {
	// Addr is host:port, or for Redis Cluster a comma-separated list of
	// some of its nodes' host:port (the client learns the others).
	Addr string `yaml:"addr"`
	// Cluster connects to a Redis Cluster even when Addr names one node.
	// Several addresses in Addr mean a cluster too.
	Cluster bool `yaml:"cluster"`
	// Password is sent with AUTH; empty means none.
	Password string `yaml:"password"`
	// DB is the database number. Redis Cluster only has 0.
	DB int `yaml:"db"`
}

// RegisterFlags sets the defaults and registers -redis, -redis-cluster,
// -redis-password and -redis-db on fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "redis", DefaultAddr, "Redis address (host:port), or comma-separated addresses of Redis Cluster nodes")
	fs.BoolVar(&c.Cluster, "redis-cluster", false, "Redis is a Redis Cluster (implied by several -redis addresses)")
	fs.StringVar(&c.Password, "redis-password", "", "Redis password (never logged; note that flags are visible in ps)")
	fs.IntVar(&c.DB, "redis-db", 0, "Redis database number")
}

// Addrs are the addresses of Addr.
func (c Config) Addrs() []string {
	var out []string
	for a := range strings.SplitSeq(c.Addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// IsCluster says whether c names a Redis Cluster.
func (c Config) IsCluster() bool { return c.Cluster || len(c.Addrs()) > 1 }

// Validate checks the addresses and database number.
func (c Config) Validate() error {
	addrs := c.Addrs()
	if len(addrs) == 0 {
		addrs = []string{c.Addr} // reported below as not host:port
	}
	for _, a := range addrs {
		if err := validateAddr(a); err != nil {
			return err
		}
	}
	if c.DB < 0 {
		return fmt.Errorf("redis: database %d is negative", c.DB)
	}
	if c.IsCluster() && c.DB != 0 {
		return fmt.Errorf("redis: database %d: Redis Cluster only has database 0", c.DB)
	}
	return nil
}

func validateAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("redis: address %q: want host:port: %w", addr, err)
	}
	if host == "" {
		return fmt.Errorf("redis: address %q: empty host", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("redis: address %q: port %q is not a number from 1 to 65535", addr, port)
	}
	return nil
}

// String prints the config with the password redacted.
func (c Config) String() string {
	if c.IsCluster() {
		return fmt.Sprintf("redis{cluster=%s password=%s}", c.Addr, c.redactedPassword())
	}
	return fmt.Sprintf("redis{addr=%s password=%s db=%d}", c.Addr, c.redactedPassword(), c.DB)
}

// GoString keeps %#v from printing the password.
func (c Config) GoString() string { return c.String() }

// LogValue implements slog.LogValuer with the password redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("password", c.redactedPassword()),
		slog.Int("db", c.DB),
		slog.Bool("cluster", c.IsCluster()),
	)
}

// redactedPassword shows whether a password is set, never what it is.
func (c Config) redactedPassword() string {
	if c.Password == "" {
		return ""
	}
	return redacted
}

// Open validates cfg, connects and pings until Redis answers, retrying with
// backoff: Redis may still be starting, or loading its append-only file.
// Wrong passwords and database numbers fail at once. With a deadline on
// ctx it waits until then; without one it gives up after
// DefaultOpenTimeout without a sign of life, where a server answering
// LOADING is alive: a frontier of hundreds of millions of URIs takes
// minutes to load, and a role that gave up meanwhile would only be
// restarted into the same wait, later.
func Open(ctx context.Context, cfg Config, opts ...OpenOption) (*redis.Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.IsCluster() {
		return nil, fmt.Errorf("redis %s: a cluster needs OpenUniversal", cfg.Addr)
	}
	w := newWaiting(ctx, opts)
	ro := &redis.Options{Addr: cfg.Addr, Password: cfg.Password, DB: cfg.DB}
	if err := w.ready(ctx, *ro, nil); err != nil {
		return nil, fmt.Errorf("redis %s: %w", cfg.Addr, err)
	}
	c := redis.NewClient(ro)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis %s: ping: %w", cfg.Addr, err)
	}
	return c, nil
}

// probe makes one readiness attempt. A plain TCP dial comes first: while
// nothing listens it fails quietly, where go-redis would log every failed
// dial through its global logger. Then a throwaway client with go-redis's
// retries off sends one PING (after AUTH and SELECT), so its error says
// what went wrong. The client is not reused: after a failed dial a go-redis
// pool starts a background redialer that outlives Close by up to a second.
func probe(ctx context.Context, opts redis.Options, check func(context.Context, *redis.Client) error) error {
	d := net.Dialer{Timeout: time.Second}
	conn, err := d.DialContext(ctx, "tcp", opts.Addr)
	if err != nil {
		return err
	}
	_ = conn.Close()

	opts.MaxRetries = -1
	opts.DialerRetries = 1
	opts.DialTimeout = time.Second
	c := redis.NewClient(&opts)
	defer func() { _ = c.Close() }()
	if err := c.Ping(ctx).Err(); err != nil || check == nil {
		return err
	}
	return check(ctx, c)
}

// permanent reports server replies that retrying cannot change: wrong
// password, no such database.
func permanent(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	for _, prefix := range []string{"WRONGPASS", "NOAUTH", "ERR AUTH", "ERR invalid password", "ERR DB index", "ERR invalid DB index"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}
