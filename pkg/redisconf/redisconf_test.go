package redisconf_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/redisconf"
)

// The embedded redis-server starts with Args, so Check finds nothing;
// a setting changed on the running server is reported with both values;
// a user refused CONFIG gets an error and no differences.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	_, rdb := embeddedtest.RedisServer(t, t.TempDir())
	if diffs, err := redisconf.Check(ctx, rdb); err != nil || len(diffs) != 0 {
		t.Fatalf("server started with Args: %q, %v", diffs, err)
	}
	if err := rdb.ConfigSet(ctx, "list-compress-depth", "1").Err(); err != nil {
		t.Fatal(err)
	}
	diffs, err := redisconf.Check(ctx, rdb)
	if err != nil || len(diffs) != 1 || !strings.HasPrefix(diffs[0], "list-compress-depth is 1, the frontier's memory figures assume 0") {
		t.Fatalf("changed setting: %q, %v", diffs, err)
	}

	if err := rdb.Do(ctx, "ACL", "SETUSER", "limited", "on", ">secret", "~*", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	lim := redis.NewClient(&redis.Options{Addr: rdb.Options().Addr, Username: "limited", Password: "secret"})
	t.Cleanup(func() { _ = lim.Close() })
	diffs, err = redisconf.Check(ctx, lim)
	if err == nil || len(diffs) != 0 || !strings.Contains(err.Error(), "config get hash-max-listpack-entries") {
		t.Fatalf("user without CONFIG: %q, %v", diffs, err)
	}
}

func TestArgs(t *testing.T) {
	got := strings.Join(redisconf.Args(), " ")
	if want := "--hash-max-listpack-entries 128 --list-compress-depth 0 --list-max-listpack-size 8"; got != want {
		t.Fatalf("Args() = %q, want %q", got, want)
	}
}
