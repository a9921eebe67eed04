package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/sheets"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// Config is what an Applier acts on. The hooks are the worker's: they do
// what needs its pipeline (admission, crawled events, its run).
type Config struct {
	Redis redis.UniversalClient
	// Crawl is the crawl name (fc, dc), Stream the worker's stream (npld,
	// bypm; "" for a crawl without streams), Worker its id.
	Crawl, Stream, Worker string
	Frontier              *frontier.Frontier
	Sheets                *sheets.Sheets
	Logger                *slog.Logger
	// TTL is how long command ids are remembered (default DefaultTTL).
	TTL time.Duration
	// Exclusions is the list the worker's scope reads: a change made
	// through it is in the worker's own scope before the command is
	// acknowledged (other workers read it within
	// scope.sourceCheckInterval). Nil: a list of the Applier's own.
	Exclusions *scope.Exclusions

	// Seeds admits c.URLs as seeds through the worker's admission and
	// says what it did.
	Seeds func(ctx context.Context, c messages.Control) (string, error)
	// Delete takes the queued URIs sel selects and finishes each with
	// frontier.StatusDeleted, a crawled event and a crawl.log line; it
	// returns how many. For a terminate of a host or target (c.Command
	// terminate) the events carry AnnotationTerminate.
	Delete func(ctx context.Context, sel frontier.Selector, c messages.Control) (int, error)
	// Terminate stops the worker: nothing new is claimed, in-flight URIs
	// finish, Run returns. It must be safe to call more than once.
	Terminate func(c messages.Control)
}

// Applier applies control commands for one worker.
type Applier struct {
	cfg  Config
	excl *scope.Exclusions
}

// Result says what Apply did.
type Result struct {
	// Applied is false when the command was not for this worker (another
	// worker or stream) or was already applied (Skipped says which).
	Applied bool
	Skipped string
	// Detail describes the change, for the log and the acknowledgement.
	Detail string
}

// New checks cfg and returns an Applier.
func New(cfg Config) (*Applier, error) {
	var missing []string
	for name, nil_ := range map[string]bool{"Redis": cfg.Redis == nil, "Crawl": cfg.Crawl == "", "Worker": cfg.Worker == "",
		"Frontier": cfg.Frontier == nil, "Sheets": cfg.Sheets == nil, "Seeds": cfg.Seeds == nil, "Delete": cfg.Delete == nil,
		"Terminate": cfg.Terminate == nil} {
		if nil_ {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("control applier: missing %s", strings.Join(missing, ", "))
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	excl := cfg.Exclusions
	if excl == nil {
		excl = scope.NewExclusions(cfg.Redis, cfg.Frontier.Prefix())
	}
	return &Applier{cfg: cfg, excl: excl}, nil
}

// Apply acts on one command. A command for another worker or stream is
// skipped; a state command already applied to this frontier (its id
// remembered in Redis) is skipped; otherwise it is applied, logged with
// who sent it and acknowledged. An invalid command (bad prefix, bad
// regex) is an error saying why, and changes nothing; it is acknowledged
// with the error too, so the sender learns of it.
func (a *Applier) Apply(ctx context.Context, c messages.Control) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, fmt.Errorf("control command %s: %w", c.ID, err)
	}
	if c.ID == "" {
		return Result{}, errors.New("control command: empty id")
	}
	if c.Target != "" && c.Target != AllWorkers && c.Target != a.cfg.Worker {
		return Result{Skipped: "for worker " + c.Target}, nil
	}
	if c.Stream != "" && c.Stream != a.cfg.Stream {
		return Result{Skipped: "for stream " + c.Stream}, nil
	}
	log := a.cfg.Logger.With("id", c.ID, "command", c.Command, "by", c.Who())
	if c.Command == messages.CommandTerminate && !terminatesPart(c) {
		// Every worker acts on it; its own effect (stopping) is idempotent.
		// Recorded too, so a worker restarted afterwards stays idle.
		if err := MarkTerminated(ctx, a.cfg.Redis, a.cfg.Frontier.Prefix(), c.ID); err != nil {
			log.Warn("control: terminate not recorded; a restarted worker would crawl", "err", err)
		}
		a.cfg.Terminate(c)
		res := Result{Applied: true, Detail: "terminating: no new claims, in-flight URIs finish"}
		log.Warn("control: terminate", "scope", c.EffectiveScope())
		return res, a.ack(ctx, c, "worker:"+a.cfg.Worker, res.Detail, nil)
	}
	// Bad input is refused before the id is claimed, so a corrected
	// command with the same id still applies.
	op, err := a.prepare(c)
	if err != nil {
		_ = a.ack(ctx, c, a.cfg.Frontier.Name(), "refused", err)
		return Result{}, fmt.Errorf("control command %s (%s): %w", c.ID, c.Command, err)
	}
	first, err := a.cfg.Redis.SetNX(ctx, doneKey(a.cfg.Crawl, c.ID, a.cfg.Frontier.Name()), a.cfg.Worker, a.cfg.TTL).Result()
	if err != nil {
		return Result{}, fmt.Errorf("control command %s: claim id: %w", c.ID, err)
	}
	if !first {
		return Result{Skipped: "already applied"}, nil
	}
	detail, err := op(ctx)
	if err != nil {
		// Forget the id, so a replay (or the sender again) can apply it
		// once the cause (Redis, the broker) is gone.
		if derr := a.cfg.Redis.Del(context.WithoutCancel(ctx), doneKey(a.cfg.Crawl, c.ID, a.cfg.Frontier.Name())).Err(); derr != nil {
			log.Warn("control: forget failed command id", "err", derr)
		}
		_ = a.ack(ctx, c, a.cfg.Frontier.Name(), "failed", err)
		return Result{}, fmt.Errorf("control command %s (%s): %w", c.ID, c.Command, err)
	}
	log.Info("control: applied", "frontier", a.cfg.Frontier.Name(), "result", detail)
	return Result{Applied: true, Detail: detail}, a.ack(ctx, c, a.cfg.Frontier.Name(), detail, nil)
}

func (a *Applier) ack(ctx context.Context, c messages.Control, key, result string, err error) error {
	return writeAck(context.WithoutCancel(ctx), a.cfg.Redis, a.cfg.TTL, ackEntry{crawl: a.cfg.Crawl, id: c.ID,
		command: c.Command, by: c.Who(), worker: a.cfg.Worker, scopeKey: key, result: result, err: err})
}

// prepare checks what validation in pkg/messages cannot (prefixes as SURT
// prefixes) and returns the change to make.
func (a *Applier) prepare(c messages.Control) (func(context.Context) (string, error), error) {
	switch c.Command {
	case messages.CommandPause, messages.CommandResume:
		return a.pauseOp(c), nil
	case messages.CommandTerminate: // of a host or target (Apply)
		return a.terminateOp(c), nil
	case messages.CommandSeeds:
		return func(ctx context.Context) (string, error) { return a.cfg.Seeds(ctx, c) }, nil
	case messages.CommandExclusions:
		prefixes, err := Prefixes(c)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (string, error) {
			if c.Action == messages.ActionRemove {
				n, err := a.excl.Remove(ctx, prefixes)
				return fmt.Sprintf("removed %d of %d exclusions", n, len(prefixes)), err
			}
			n, err := a.excl.Add(ctx, prefixes)
			return fmt.Sprintf("added %d new of %d exclusions", n, len(prefixes)), err
		}, nil
	case messages.CommandSheets:
		prefixes, err := Prefixes(c)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (string, error) { return a.attach(ctx, prefixes, c.Sheets) }, nil
	case messages.CommandDelete:
		sel, err := Selector(c)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (string, error) {
			n, err := a.cfg.Delete(ctx, sel, c)
			return fmt.Sprintf("deleted %d queued URIs", n), err
		}, nil
	}
	return nil, fmt.Errorf("command %q is not applied to Redis", c.Command)
}

// pauseOp pauses or resumes the crawl or stream (the frontier's pause
// flag, Stats.Paused), a host (its queue) or a target (its source tag in
// the paused set the workers check at claim time).
func (a *Applier) pauseOp(c messages.Control) func(context.Context) (string, error) {
	pause := c.Command == messages.CommandPause
	f := a.cfg.Frontier
	return func(ctx context.Context) (string, error) {
		verb := map[bool]string{true: "paused", false: "resumed"}[pause]
		switch c.EffectiveScope() {
		case messages.ScopeHost:
			var err error
			if pause {
				err = f.PauseHost(ctx, c.Host)
			} else {
				err = f.ResumeHost(ctx, c.Host)
			}
			if err != nil {
				// A host another stream's frontier holds is not an error
				// of the command: say so in the acknowledgement.
				if strings.Contains(err.Error(), "unknown host") || strings.Contains(err.Error(), "no such host") {
					return "host " + c.Host + " not in frontier " + f.Name(), nil
				}
				return "", err
			}
			return verb + " host " + c.Host, nil
		case messages.ScopeTarget:
			if pause {
				return verb + " target " + c.Source, a.pauseTarget(ctx, c.Source)
			}
			// The frontier first, then the set: a worker's claim-time
			// check (which reads the set) lets the target through only
			// once its URIs are back in their queues.
			n, err := f.ResumeSource(ctx, c.Source)
			if err == nil {
				err = a.cfg.Redis.SRem(ctx, PausedSourcesKey(f.Prefix()), c.Source).Err()
			}
			if err != nil {
				return "", fmt.Errorf("%s target %s: %w", verb, c.Source, err)
			}
			return fmt.Sprintf("%s target %s (%d queued URIs back in line)", verb, c.Source, n), nil
		default: // crawl, stream: the stream was matched in Apply
			var err error
			if pause {
				err = f.Pause(ctx)
			} else if err = f.Resume(ctx); err == nil {
				// A resume also lifts a terminate: idle workers claim again.
				err = ClearTerminated(ctx, a.cfg.Redis, f.Prefix())
			}
			if err != nil {
				return "", err
			}
			return verb + " frontier " + f.Name(), nil
		}
	}
}

func (a *Applier) attach(ctx context.Context, prefixes, names []string) (string, error) {
	var dropped []string
	for _, p := range prefixes {
		d, err := a.cfg.Sheets.Attach(ctx, p, names, nil)
		if err != nil {
			return "", err
		}
		dropped = append(dropped, d.Sheets...)
	}
	if err := a.cfg.Sheets.Refresh(ctx); err != nil {
		return "", err
	}
	s := fmt.Sprintf("attached %s to %d prefixes", strings.Join(names, ","), len(prefixes))
	if len(dropped) > 0 {
		s += "; unknown sheets dropped: " + strings.Join(dropped, ",")
	}
	return s, nil
}

// Prefixes returns the SURT prefixes a command names: its surts (literal
// prefixes, with or without the leading "+" of a SURT file) and the
// prefixes its urls imply, normalised as the excluded-SURTs file's lines
// (https folded to http). A bad one is an error naming it.
func Prefixes(c messages.Control) ([]string, error) {
	var out []string
	for i, s := range c.SURTs {
		line := strings.TrimSpace(s)
		if !strings.HasPrefix(line, "+") {
			line = "+" + line
		}
		p, ok, err := scope.PrefixFromLine(line)
		if err != nil || !ok {
			return nil, fmt.Errorf("surts[%d] %q: %w", i, s, orEmpty(err))
		}
		out = append(out, p)
	}
	for i, u := range c.URLs {
		p, ok, err := scope.PrefixFromLine(strings.TrimSpace(u))
		if err != nil || !ok {
			return nil, fmt.Errorf("urls[%d] %q: %w", i, u, orEmpty(err))
		}
		out = append(out, p)
	}
	return out, nil
}

func orEmpty(err error) error {
	if err == nil {
		return errors.New("not a SURT prefix")
	}
	return err
}

// Selector builds the frontier selector of a delete: URIs under one of the
// prefixes (when any) and matching the regex (when set). Both given means
// both must hold, so "under this site, matching this" is expressible and
// a slip in one does not widen the delete.
func Selector(c messages.Control) (frontier.Selector, error) {
	prefixes, err := Prefixes(c)
	if err != nil {
		return frontier.Selector{}, err
	}
	var re *regexp.Regexp
	if c.Regex != "" {
		if re, err = regexp.Compile(c.Regex); err != nil {
			return frontier.Selector{}, fmt.Errorf("regex: %w", err)
		}
	}
	if len(prefixes) == 0 && re == nil {
		return frontier.Selector{}, errors.New("delete needs a prefix or a regex")
	}
	var sel frontier.Selector
	if len(prefixes) > 0 {
		// A queue may hold URIs under a prefix when its own SURT and the
		// prefix are prefixes one of the other.
		sel.Host = func(host string) bool {
			hs := surt.Heritrix("http://" + host + "/")
			for _, p := range prefixes {
				if strings.HasPrefix(hs, p) || strings.HasPrefix(p, hs) || strings.HasPrefix(p, strings.TrimSuffix(hs, ")/")) {
					return true
				}
			}
			return false
		}
	}
	sel.URL = func(u string) bool {
		if re != nil && !re.MatchString(u) {
			return false
		}
		if len(prefixes) == 0 {
			return true
		}
		s := foldHTTPS(surt.Heritrix(u))
		for _, p := range prefixes {
			if strings.HasPrefix(s, p) {
				return true
			}
		}
		return false
	}
	return sel, nil
}

func foldHTTPS(s string) string {
	if rest, ok := strings.CutPrefix(s, "https://"); ok {
		return "http://" + rest
	}
	return s
}
