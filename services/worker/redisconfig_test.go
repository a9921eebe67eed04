package worker

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

// A worker warns at start about each redis-server setting that differs
// from what the frontier's memory figures assume, and says nothing when
// they agree.
func TestLogServerConfig(t *testing.T) {
	_, rdb := embeddedtest.RedisServer(t, t.TempDir())
	log, buf := testlog.New(slog.LevelInfo)
	logServerConfig(rdb, log)
	if s := buf.String(); s != "" {
		t.Fatalf("warned about a server started with redisconf.Args: %s", s)
	}
	if err := rdb.ConfigSet(context.Background(), "list-max-listpack-size", "-2").Err(); err != nil {
		t.Fatal(err)
	}
	logServerConfig(rdb, log)
	if s := buf.String(); !strings.Contains(s, "redis setting") || !strings.Contains(s, "list-max-listpack-size is -2") {
		t.Fatalf("no warning for list-max-listpack-size -2: %q", s)
	}
}
