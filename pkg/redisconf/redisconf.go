// Package redisconf holds the redis-server settings that the frontier's
// memory figures assume (docs/frontier.md, Memory), for the servers Trawler
// starts itself and for a check of a server it is given.
package redisconf

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// serverSettings: every index bucket a listpack
// (hash-max-listpack-entries at least the 128 a bucket can reach, and not
// much more, since each access scans it); no LZF compression of inner
// nodes, since a queue's cold items are zstd blocks already (frontier's
// blocks.go) and Redis tries LZF again, and fails, at every access to an
// inner node of them: with list-compress-depth 1, LINDEX at 2,000 URIs a
// host cost 94 µs a call. Host queues in nodes of 8 elements: every
// LPOP, and every push of a block's unpacked items, rewrites the head
// node, and with nodes of 16 a host's 100 queued URIs were one node of
// blocks and items, which made those pushes cost 5 to 10 times as much
// as at 10 a host (docs/frontier.md, Sizing).
func serverSettings() [][2]string {
	return [][2]string{
		{"hash-max-listpack-entries", "128"},
		{"list-compress-depth", "0"},
		{"list-max-listpack-size", "8"},
	}
}

// Args are redis-server command-line arguments that set what the
// frontier expects; the embedded server, the tests and docker-compose use
// them.
func Args() []string {
	var out []string
	for _, s := range serverSettings() {
		out = append(out, "--"+s[0], s[1])
	}
	return out
}

// Check compares the server's settings with Args and
// returns one line per difference, for the worker to log at start. A
// server that refuses CONFIG GET (a managed Redis, an ACL) is not an
// error: the differences are then unknown and err says why.
func Check(ctx context.Context, rdb redis.UniversalClient) (diffs []string, err error) {
	for _, s := range serverSettings() {
		got, err := rdb.ConfigGet(ctx, s[0]).Result()
		if err != nil {
			return diffs, fmt.Errorf("config get %s: %w", s[0], err)
		}
		if v, ok := got[s[0]]; ok && v != s[1] {
			diffs = append(diffs, fmt.Sprintf("%s is %s, the frontier's memory figures assume %s (docs/frontier.md, Memory)", s[0], v, s[1]))
		}
	}
	return diffs, nil
}
