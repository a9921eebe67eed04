// Package embeddedtest starts the embedded Kafka broker and Redis for
// tests: real servers on loopback, with the project's topics applied,
// stopped by t.Cleanup.
package embeddedtest

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	kafkatopics "github.com/trawler-crawl/trawler/kafka-topics"
	"github.com/trawler-crawl/trawler/pkg/embedded"
	"github.com/trawler-crawl/trawler/pkg/kafka"
)

// Redis starts a redis-server (miniredis when none is installed) in a
// temporary directory and returns a client for it.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	r, err := embedded.StartRedis(context.Background(), embedded.RedisOptions{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// RedisServer starts a real redis-server with its data in dir and returns
// it (its address, its process) and a client for it; the test is skipped
// when no redis-server is installed (CI installs one), since what it
// tests (replication, persistence, a restart on the same data) is
// redis-server's, not miniredis's.
func RedisServer(t testing.TB, dir string) (*embedded.Redis, *redis.Client) {
	t.Helper()
	r, err := embedded.StartRedis(context.Background(), embedded.RedisOptions{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if r.Kind() != embedded.KindRedisServer {
		t.Skip("needs redis-server")
	}
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	return r, rdb
}

// Kafka starts a broker on an ephemeral loopback port, creates every topic
// of kafka-topics/ with the given partition count, and returns its
// configuration and a client.
func Kafka(t testing.TB, partitions int32) (kafka.Config, *kgo.Client) {
	t.Helper()
	ctx := context.Background()
	k, err := embedded.StartKafka(ctx, embedded.KafkaOptions{DataDir: t.TempDir(), Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	kc := kafka.Config{Brokers: k.Brokers(), ClientID: "test"}
	cl, err := kafka.NewClient(kc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	specs, err := kafka.ParseTopics(kafkatopics.Default())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kafka.ApplyTopics(ctx, kadm.NewClient(cl), specs, partitions); err != nil {
		t.Fatal(err)
	}
	return kc, cl
}
