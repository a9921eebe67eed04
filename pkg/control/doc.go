// Package control applies operators' commands from the <crawl>.control
// topic (decoded and validated by pkg/messages) to the crawl's state in
// Redis, and reports what it did.
//
// Every worker reads every command. A command whose effect is state in
// Redis (pause, resume, exclusions, sheets, seeds, delete) is applied once
// per frontier (stream): the first worker to claim the command id in Redis
// applies it and the others skip it, and a worker started later reads the
// state, not the topic. Terminate is local: every worker acts on it. Each
// command is acknowledged in a Redis hash (see Ack) with when, by which
// worker and with what result it was applied.
//
// Send builds and produces a command, for `trawler ctl` and the admin API.
package control
