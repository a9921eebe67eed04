package control

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoAck is returned by Ack for a command no worker has acknowledged
// (not yet applied, unknown, or older than DefaultTTL).
var ErrNoAck = errors.New("control: command not acknowledged")

// Acknowledgement is what the workers recorded about one command.
type Acknowledgement struct {
	ID      string
	Command string
	// By is who sent it (messages.Control.Who).
	By string
	// AppliedAt, Worker and Result describe the first application (or,
	// for terminate, the first worker that acted on it); Error is set when
	// it failed.
	AppliedAt time.Time
	Worker    string
	Result    string
	Error     string
	// Results holds every application: key "<frontier>" for a command
	// applied once per frontier (stream), "worker:<id>" for terminate,
	// which every worker acts on; the value names the worker and result.
	Results map[string]string
}

// Ack reads the acknowledgement of command id in crawl; ErrNoAck when
// there is none.
func Ack(ctx context.Context, rdb redis.UniversalClient, crawl, id string) (Acknowledgement, error) {
	m, err := rdb.HGetAll(ctx, AckKey(crawl, id)).Result()
	if err != nil {
		return Acknowledgement{}, fmt.Errorf("control ack %s of %s: %w", id, crawl, err)
	}
	if len(m) == 0 {
		return Acknowledgement{}, fmt.Errorf("control ack %s of %s: %w", id, crawl, ErrNoAck)
	}
	a := Acknowledgement{ID: id, Command: m["command"], By: m["by"], Worker: m["worker"], Result: m["result"],
		Error: m["error"], Results: map[string]string{}}
	if t, err := time.Parse(time.RFC3339Nano, m["applied_at"]); err == nil {
		a.AppliedAt = t
	}
	for k, v := range m {
		if r, ok := strings.CutPrefix(k, "r:"); ok {
			a.Results[r] = v
		}
	}
	return a, nil
}

// ackEntry is one application being acknowledged.
type ackEntry struct {
	crawl, id, command, by string
	worker, scopeKey       string // scopeKey: frontier name or "worker:<id>"
	result                 string
	err                    error
}

// writeAck records e: the first application fills the main fields (HSETNX
// keeps them), every application adds its line to Results.
func writeAck(ctx context.Context, rdb redis.UniversalClient, ttl time.Duration, e ackEntry) error {
	k := AckKey(e.crawl, e.id)
	line := e.worker + ": " + e.result
	if e.err != nil {
		line = e.worker + ": error: " + e.err.Error()
	}
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSetNX(ctx, k, "command", e.command)
		p.HSetNX(ctx, k, "by", e.by)
		p.HSetNX(ctx, k, "applied_at", time.Now().UTC().Format(time.RFC3339Nano))
		p.HSetNX(ctx, k, "worker", e.worker)
		p.HSetNX(ctx, k, "result", e.result)
		if e.err != nil {
			p.HSetNX(ctx, k, "error", e.err.Error())
		}
		p.HSet(ctx, k, "r:"+e.scopeKey, line)
		p.Expire(ctx, k, ttl)
		return nil
	})
	if err != nil {
		return fmt.Errorf("control ack %s: %w", e.id, err)
	}
	return nil
}
