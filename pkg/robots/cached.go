package robots

import (
	"context"
	"fmt"
	"time"
)

// Cached is a robots.txt as the cache holds it, for an operator to read.
type Cached struct {
	Origin  string
	Status  int
	Body    []byte
	Fetched time.Time
}

// Cached returns the robots.txt stored for origin, expired or not (the
// operator console shows what the crawler last saw); ok is false when
// nothing is stored. It reads Redis only, never the local LRU, and
// counts no hit or miss.
func (c *Cache) Cached(ctx context.Context, origin string) (Cached, bool, error) {
	vals, err := c.rdb.HMGet(ctx, c.prefix+origin, fieldStatus, fieldBody, fieldFetched).Result()
	if err != nil {
		return Cached{}, false, fmt.Errorf("robots cache read %s: %w", origin, err)
	}
	if vals[0] == nil && vals[1] == nil && vals[2] == nil {
		return Cached{}, false, nil
	}
	status, body, fetched, err := decodeEntry(vals)
	if err != nil {
		return Cached{}, false, fmt.Errorf("robots cache read %s: %w", origin, err)
	}
	return Cached{Origin: origin, Status: status, Body: body, Fetched: fetched}, true, nil
}
