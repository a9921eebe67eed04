package control

import (
	"context"
	"fmt"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// AnnotationTerminate is the annotation of the crawled event (and
// crawl.log line) of a queued URI deleted by a terminate of its host or
// target, beside status -6000, so it is told apart from a delete command.
const AnnotationTerminate = "terminate"

// terminatesPart reports whether c terminates a host or a target: a state
// command applied once per frontier, unlike a terminate of the crawl or a
// stream, which every worker acts on (it stops).
func terminatesPart(c messages.Control) bool {
	if c.Command != messages.CommandTerminate {
		return false
	}
	s := c.EffectiveScope()
	return s == messages.ScopeHost || s == messages.ScopeTarget
}

// terminateOp ends a host or a target as an operator expects: nothing more
// of it is claimed (it is paused, so URIs admitted later wait too, until a
// resume), its queued URIs finish -6000 "deleted by operator" through the
// delete path, annotated terminate, and its URIs in flight finish as they
// are. Applied again it pauses what is paused and deletes what was queued
// since, so it is idempotent.
func (a *Applier) terminateOp(c messages.Control) func(context.Context) (string, error) {
	f := a.cfg.Frontier
	return func(ctx context.Context) (string, error) {
		var sel frontier.Selector
		var what string
		if c.EffectiveScope() == messages.ScopeHost {
			what = "host " + c.Host
			if err := f.PauseHost(ctx, c.Host); err != nil {
				if strings.Contains(err.Error(), "unknown host") {
					return "host " + c.Host + " not in frontier " + f.Name(), nil
				}
				return "", fmt.Errorf("terminate %s: %w", what, err)
			}
			sel.Host = func(h string) bool { return h == c.Host }
		} else {
			what = "target " + c.Source
			if err := a.pauseTarget(ctx, c.Source); err != nil {
				return "", fmt.Errorf("terminate %s: %w", what, err)
			}
			sel.Source = c.Source
		}
		n, err := a.cfg.Delete(ctx, sel, c)
		if err != nil {
			return "", fmt.Errorf("terminate %s: %w", what, err)
		}
		return fmt.Sprintf("terminated %s: paused, %d queued URIs deleted, in-flight URIs finish", what, n), nil
	}
}

// pauseTarget pauses a target in the frontier (claims skip its URIs) and
// in the paused set the workers and the status read.
func (a *Applier) pauseTarget(ctx context.Context, source string) error {
	if err := a.cfg.Frontier.PauseSource(ctx, source); err != nil {
		return err
	}
	if err := a.cfg.Redis.SAdd(ctx, PausedSourcesKey(a.cfg.Frontier.Prefix()), source).Err(); err != nil {
		return fmt.Errorf("pause target %s: %w", source, err)
	}
	return nil
}
