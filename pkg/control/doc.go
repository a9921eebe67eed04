// Package control applies operators' commands from the <crawl>.control
// topic (decoded and validated by pkg/messages) to the crawl's state in
// Redis, and reports what it did.
//
// Every worker reads every command. A command whose effect is state in
// Redis (pause, resume, exclusions, sheets, seeds, delete) is applied once
// per frontier (stream): the first worker to claim the command id in Redis
// applies it and the others skip it, and a worker started later reads the
// state, not the topic. Terminate of the crawl or a stream is local: every
// worker acts on it (stops claiming, finishes its URIs in flight, ends).
//
// Terminate of a host or a target (source tag) is a state command, applied
// once per frontier, and means what an operator expects of it: nothing more
// of it is claimed (the host or target is paused, so URIs of it admitted
// afterwards wait as well), its queued URIs end as Heritrix's -6000
// "deleted by operator" through the delete path, with the annotation
// "terminate" in their crawled events and crawl.log lines, and its URIs in
// flight finish normally. The workers go on with everything else. It is
// idempotent (a replay is skipped; a new terminate deletes only what was
// queued since) and acknowledged like every command; a resume of the host
// or target lifts it. A paused target holds up none of its hosts' other
// targets: the frontier's claim sets its URIs aside (pkg/frontier).
//
// Each command is acknowledged in a Redis hash (see Ack) with when, by
// which worker and with what result it was applied.
//
// Send builds and produces a command, for `trawler ctl` and the admin API.
package control
