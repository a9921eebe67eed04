package control

import "time"

// DefaultTTL is how long a command id (and its acknowledgement) is
// remembered: replaying a command within it changes nothing.
const DefaultTTL = 7 * 24 * time.Hour

// keyPrefix is where a crawl's control state lives. It is per crawl, not
// per frontier, because the admin API reads acknowledgements by crawl and
// command id alone.
func keyPrefix(crawl string) string { return "trawler:" + crawl + ":control:" }

// AckKey is the Redis hash acknowledging command id of crawl.
func AckKey(crawl, id string) string { return keyPrefix(crawl) + "ack:" + id }

// doneKey records that command id was applied to one frontier (stream);
// set with SET NX, it makes the application happen once.
func doneKey(crawl, id, frontier string) string {
	return keyPrefix(crawl) + "done:" + id + ":" + frontier
}

// PausedSourcesKey is the Redis set of paused targets' source tags of a
// frontier, under its key prefix (its hash tag), beside its seeds.
func PausedSourcesKey(frontierPrefix string) string { return frontierPrefix + "control:paused-sources" }
