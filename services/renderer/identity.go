package renderer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/identity"
)

// A renderer's identity names its files: the {host} part of its WARC
// names, its crawl.log and spool directories. Renderers of a stream share
// one WARC directory (warcs/<name>-render/), so two live renderers must
// never share an identity, or they would write, recover and rename each
// other's files. Unless the caller owns the directory (Config.IdentityLease
// 0, as standalone), the identity is held through a Redis lease
// (pkg/identity) for as long as the renderer runs:
//
//   - --renderer-id names it; a process started while that identity is
//     leased by a live renderer refuses to start.
//   - otherwise the renderer takes the lowest free slot r0, r1, ... of its
//     stream, so Deployment pods, whose names change on every restart, get
//     distinct identities that stay stable across restarts (a restarted
//     pod usually gets its old slot back, and its files with it).
//
// A janitor (janitor.go) closes the open files of renderers that died and
// whose identity nobody took again.

// identityPrefix prefixes the slot identities: r0, r1, ...
const identityPrefix = "r"

// identityOptions are the renderer's lease options for cfg. The scope is
// the renderers' own ("fc-npld-render"), apart from the workers' slots.
func identityOptions(cfg Config, log *slog.Logger) identity.Options {
	return identity.Options{Scope: cfg.name() + "-render", Kind: "renderer", Flag: "--renderer-id",
		TTL: cfg.IdentityLease, Logger: log}
}

// acquireIdentity resolves the renderer's identity as the comment above
// says and returns it with its lease (nil when cfg.IdentityLease is 0: the
// caller owns the directories and cfg.ID is used as given).
func acquireIdentity(ctx context.Context, rdb redis.UniversalClient, cfg Config, log *slog.Logger) (string, *identity.Lease, error) {
	if cfg.IdentityLease <= 0 {
		if cfg.ID == "" {
			return "", nil, errors.New("renderer identity: an unleased renderer (identity lease 0) needs an ID")
		}
		return cfg.ID, nil, nil
	}
	if rdb == nil {
		return "", nil, errors.New("renderer identity: a Redis client is needed to lease one")
	}
	o := identityOptions(cfg, log)
	if cfg.ID != "" {
		l, err := identity.Named(ctx, rdb, o, cfg.ID)
		if err != nil {
			return "", nil, err
		}
		return cfg.ID, l, nil
	}
	return identity.Slot(ctx, rdb, o, identityPrefix)
}

// watchIdentity ends the run with identity.ErrLost as its cause when the
// lease is taken over, since the new holder may write or recover the same
// files; it returns when ctx ends.
func (r *Renderer) watchIdentity(ctx context.Context, cancel context.CancelCauseFunc) {
	select {
	case <-r.idLease.Lost():
		cancel(fmt.Errorf("renderer %s: %w", r.cfg.ID, identity.ErrLost))
	case <-ctx.Done():
	}
}

// ID is the renderer's identity, settled by New: callers name their logs
// with it.
func (r *Renderer) ID() string { return r.cfg.ID }
