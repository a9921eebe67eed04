package redisconn

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// CommandStat is one command's line of INFO commandstats: how often it
// ran and the server time it took. Commands a Lua script calls are
// counted under their own names as well as in the EVALSHA that ran them.
type CommandStat struct {
	Name  string
	Calls int64
	Usec  int64
}

// CommandStats reads INFO commandstats, busiest (by server time) first.
// A server without it (miniredis) gives nil and no error.
func CommandStats(ctx context.Context, rdb redis.UniversalClient) ([]CommandStat, error) {
	s, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, fmt.Errorf("redis info commandstats: %w", err)
	}
	return ParseCommandStats(s), nil
}

// ParseCommandStats parses INFO commandstats text; lines of another form
// are skipped.
func ParseCommandStats(info string) []CommandStat {
	var out []CommandStat
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, found := strings.CutPrefix(name, "cmdstat_")
		if !ok || !found {
			continue
		}
		st := CommandStat{Name: name}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				st.Calls = n
			case "usec":
				st.Usec = n
			}
		}
		out = append(out, st)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Usec > out[j].Usec })
	return out
}
