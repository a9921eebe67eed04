package redisconn

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/embedded"
)

func TestParseCommandStats(t *testing.T) {
	info := "# Commandstats\r\n" +
		"cmdstat_get:calls=4,usec=68,usec_per_call=17.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_evalsha:calls=1000,usec=350000,usec_per_call=350.00\r\n" +
		"not a stat line\r\n" +
		"cmdstat_broken\r\n" +
		"cmdstat_hset:calls=x,usec=12\r\n" +
		"cmdstat_client|setinfo:calls=2,usec=3\r\n"
	got := ParseCommandStats(info)
	want := []CommandStat{
		{Name: "evalsha", Calls: 1000, Usec: 350000},
		{Name: "get", Calls: 4, Usec: 68},
		{Name: "hset", Calls: 0, Usec: 12}, // an unreadable number counts as 0
		{Name: "client|setinfo", Calls: 2, Usec: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseCommandStats =\n%+v\nwant\n%+v", got, want)
	}
}

// TestCommandStats reads a real redis-server's statistics after a few
// commands.
func TestCommandStats(t *testing.T) {
	if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ctx := context.Background()
	srv, err := embedded.StartRedis(ctx, embedded.RedisOptions{DataDir: t.TempDir(), Binary: "/usr/bin/redis-server"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	for range 3 {
		if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	stats, err := CommandStats(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stats {
		if st.Name == "set" {
			if st.Calls != 3 {
				t.Errorf("set calls = %d, want 3", st.Calls)
			}
			return
		}
	}
	t.Errorf("no set in %+v", stats)
}
