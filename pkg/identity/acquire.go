package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/redisconn"
)

// Options say whose identities a process leases and how.
type Options struct {
	// Scope names the key space (Key): the processes that share a
	// directory of files, e.g. a stream's workers "fc-npld".
	Scope string
	// Kind is the holder's kind, written in the lease and in errors:
	// "worker", "renderer".
	Kind string
	// Flag is the flag that names an identity, suggested when a named one
	// is refused: "--worker-id".
	Flag string
	// TTL is the lease time: a dead holder's identity is free this long
	// after it died. At least 100ms.
	TTL time.Duration
	// Logger receives lease events; nil discards them.
	Logger *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Named leases identity id. A janitor holding it is repairing a dead
// run's files, which takes seconds: Named waits for it (up to twice the
// lease time). A live holder of any other kind is a process with the same
// identity: Named refuses, since the two would write and recover the same
// files.
func Named(ctx context.Context, rdb redis.UniversalClient, o Options, id string) (*Lease, error) {
	if !Valid(id) {
		return nil, fmt.Errorf("%s identity %q: want letters, digits, '.', '_' or '-' (it names files)", o.Kind, id)
	}
	log := o.logger()
	key := Key(o.Scope, id)
	deadline := time.Now().Add(2 * o.TTL)
	for {
		l, err := try(ctx, rdb, key, o, log)
		if err != nil {
			return nil, fmt.Errorf("%s identity: %w", o.Kind, err)
		}
		if l != nil {
			log.Info(o.Kind+" identity leased", "identity", id, "source", "flag")
			return l, nil
		}
		var holder string
		err = redisconn.Retry(ctx, log, o.Kind+" identity", func() (err error) {
			holder, err = rdb.Get(ctx, key).Result()
			return err
		})
		if errors.Is(err, redis.Nil) {
			continue // released between SET NX and GET
		}
		if err != nil {
			return nil, fmt.Errorf("%s identity %q: %w", o.Kind, id, err)
		}
		if !strings.HasPrefix(holder, KindJanitor+" ") || time.Now().After(deadline) {
			ttl, _ := rdb.PTTL(ctx, key).Result()
			return nil, fmt.Errorf("%s identity %q of %s is already leased by a live process (%s; lease %s expires in %v "+
				"unless renewed): refusing to start, which would corrupt its WARC files; give this %s another %s",
				o.Kind, id, o.Scope, holder, key, ttl.Round(time.Millisecond), o.Kind, o.Flag)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s identity %q: %w", o.Kind, id, ctx.Err())
		case <-time.After(100 * time.Millisecond): // polling the janitor's lease
		}
	}
}

// Slot leases the lowest free slot prefix0, prefix1, ... of the scope and
// returns its identity. A restarted process usually gets its old slot
// back, and its files with it.
func Slot(ctx context.Context, rdb redis.UniversalClient, o Options, prefix string) (string, *Lease, error) {
	log := o.logger()
	for i := range Slots {
		id := SlotID(prefix, i)
		l, err := try(ctx, rdb, Key(o.Scope, id), o, log)
		if err != nil {
			return "", nil, fmt.Errorf("%s identity: %w", o.Kind, err)
		}
		if l != nil {
			log.Info(o.Kind+" identity leased", "identity", id, "source", "slot")
			return id, l, nil
		}
	}
	return "", nil, fmt.Errorf("%s identity: all %d slots of %s are leased", o.Kind, Slots, o.Scope)
}

// try is Try, sent again while Redis is not serving (it restarted, or is
// loading its data, just as this process starts): such a SET never ran,
// so sending it again cannot lease twice.
func try(ctx context.Context, rdb redis.UniversalClient, key string, o Options, log *slog.Logger) (l *Lease, err error) {
	err = redisconn.Retry(ctx, log, o.Kind+" identity", func() error {
		l, err = Try(ctx, rdb, key, o.Kind, o.TTL, log)
		return err
	})
	return l, err
}
