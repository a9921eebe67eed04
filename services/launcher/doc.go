// Package launcher turns curators' crawl feeds into launch messages.
//
// A crawl feed is the W3ACT export: JSON Lines, one target per line, each
// with its seeds, crawl settings and schedules. The launcher reads feeds from
// files, directories or HTTP(S) URLs as a stream (a feed is never held in
// memory whole), validates every line, decides which targets are active, maps
// each target's settings to sheets and writes one launch message per seed to
// the crawl's tocrawl topic (ARCHITECTURE.md sections 3 and 4.1), keyed by
// host key so every URL of a host lands on the same partition.
//
// Bad feed lines never stop a run: each is reported with its source, line
// number and reason, counted and skipped. A target's secretId (a reference to
// login credentials) is never written to logs or errors.
package launcher
