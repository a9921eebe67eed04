// Package harveststats builds NetarchiveSuite-style harvest statistics from
// crawled events: for every launch (a source tag and its launch timestamp)
// and domain, the URIs by outcome, novel and duplicate objects and bytes,
// first and last fetch, and the reason the domain stopped (completed,
// object limit, byte limit, time limit, quota, robots, DNS failure,
// terminated by the operator, still running).
//
// The events live in Redis, per source in a sorted set by event time (a
// redelivered event is the same member again); statistics are computed
// from them when a launch is read, each URL counted once per launch (its
// first event), so retries, recrawls within a launch and redelivered
// batches are all counted once. The same events give the metadata WARC
// its CDX, reports and seeds when the launch is sealed.
//
// Which launch an event belongs to: seeds carry "launchTimestamp:<ts>" in
// their annotations (the launcher puts it there and the worker copies the
// seed's heritable annotations into its event); their children do not. So
// the seeds' events tell the store each source's launches, and an event
// belongs to the latest launch of its source whose timestamp is not after
// the event's: the same rule that picks a launch's crawl.log lines
// (pkg/metawarc), and one that does not depend on the order events arrive
// in (a seed's prerequisites finish before it). docs/provenance.md says
// where this is approximate and which worker line would make it exact.
//
// A streaming crawl (stream.go; the domain crawl) keeps no event in
// Redis: its crawl-wide launches are counted as events arrive, once per
// topic partition and offset, and the role builds their metadata WARCs
// from a spool on disk.
package harveststats
