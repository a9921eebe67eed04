// Package launcher turns curators' crawl feeds into launch messages.
//
// A crawl feed is the W3ACT export: JSON Lines, one target per line, each
// with its seeds, crawl settings and schedules. The launcher reads feeds from
// files, directories or HTTP(S) URLs as a stream (a feed is never held in
// memory whole), validates every line, decides which targets are due, maps
// each target's settings to sheets and writes one launch message per seed to
// the crawl's tocrawl topic (ARCHITECTURE.md sections 3 and 4.1), keyed by
// host key so every URL of a host lands on the same partition.
//
// Entry points:
//
//   - Service.RunOnce: one run for one hour (a CronJob, --at backfills);
//   - Service.Serve: the hourly scheduler, catching up missed hours;
//   - Bulk: a large seed list streamed into dc.tocrawl, resumable, with
//     its SURT scope file;
//   - Export: watched targets for document harvesting, NEVERCRAWL targets
//     as an excluded-SURTs file.
//
// Schedules are read in an explicit time zone (feeds hold wall-clock
// times); launch timestamps are UTC. Due documents the day and hour rules,
// which follow the UK Web Archive's launcher, including at month ends and
// daylight-saving changes.
//
// Idempotence: every launch is claimed in a Ledger (Redis, one key per
// topic, hour, target and seed) before it is produced and confirmed after
// the broker acknowledged it, so running an hour twice, or two launchers
// racing, sends each launch once (see RedisLedger).
//
// Bad feed lines never stop a run: each is reported with its source, line
// number and reason, counted and skipped. A target's secretId (a reference to
// login credentials) is never written to logs or errors.
package launcher
