package identity

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Holder is a live lease of one identity, as read from Redis: what the
// operator console shows as the workers and renderers alive.
type Holder struct {
	ID string `json:"id"`
	// Kind, Host and PID are from the lease's value ("worker", the
	// holder's host name and process id); empty or 0 when the value is
	// not of the form a holder writes.
	Kind string `json:"kind"`
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// ExpiresIn is the lease's time left; it is renewed every sixth of
	// the lease time while the holder lives.
	ExpiresIn time.Duration `json:"expires_in"`
}

// Holders lists the identities leased within scope (Key), sorted by id.
// It scans the keys, so it is for an operator's page, not a hot path.
func Holders(ctx context.Context, rdb redis.UniversalClient, scope string) ([]Holder, error) {
	prefix := Key(scope, "")
	var keys []string
	iter := rdb.Scan(ctx, 0, globEscape(prefix)+"*", 200).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("identity holders of %s: %w", scope, err)
	}
	out := make([]Holder, 0, len(keys))
	for _, k := range keys {
		h, ok, err := holder(ctx, rdb, k, strings.TrimPrefix(k, prefix))
		if err != nil {
			return nil, fmt.Errorf("identity holders of %s: %w", scope, err)
		}
		if ok {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b Holder) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// holder reads one lease; false when it expired since the scan.
func holder(ctx context.Context, rdb redis.UniversalClient, key, id string) (Holder, bool, error) {
	pipe := rdb.Pipeline()
	get := pipe.Get(ctx, key)
	ttl := pipe.PTTL(ctx, key)
	if _, err := pipe.Exec(ctx); err == redis.Nil {
		return Holder{}, false, nil
	} else if err != nil {
		return Holder{}, false, err
	}
	h := Holder{ID: id, ExpiresIn: max(ttl.Val(), 0)}
	// The value is holderValue's "<kind> <host> <pid> <random>".
	if f := strings.Fields(get.Val()); len(f) == 4 {
		pid, err := strconv.Atoi(f[2])
		if err == nil {
			h.Kind, h.Host, h.PID = f[0], f[1], pid
		}
	}
	return h, true, nil
}

// globEscape escapes the characters SCAN's MATCH treats as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
