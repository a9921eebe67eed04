package worker

import (
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// fetchedBeforeLaunch reports whether a prerequisite fetched at fetched
// predates the launch l inherits, so that a relaunch refetches it.
//
// A relaunch makes its seeds and everything they reach due again (the
// launch timestamp passes down, ARCHITECTURE.md 5.4); robots.txt is one of
// those URIs, and the sitemaps it names lead to pages no link reaches.
// Keeping the cached rules until they expire would leave all of them out
// of the recrawl. The first URI of a host after the launch refetches
// robots.txt; the URIs after it find rules fetched since the launch.
//
// A launch stamped later than now (a launcher's clock ahead of the
// worker's, or local time written as UTC) is not a reason to refetch:
// rules fetched now would still predate it, and every URI of the host
// would fetch robots.txt again until the clock caught up.
func fetchedBeforeLaunch(l messages.Launch, fetched, now time.Time) bool {
	launched, ok := l.LaunchTime()
	return ok && !fetched.IsZero() && fetched.Before(launched) && !launched.After(now)
}
