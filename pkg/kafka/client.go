package kafka

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// NewClient validates cfg and returns a franz-go client. extra options are
// applied after the defaults, so they win.
//
// Producer defaults (see clientOpts): snappy compression; acks from all
// in-sync replicas with idempotent writes, so a retried batch is never
// duplicated; franz-go's default partitioner, which hashes keyed records
// with Kafka's murmur2 exactly as the Java client does, so a host key lands
// on the same partition whichever client wrote it (ARCHITECTURE.md 3).
func NewClient(cfg Config, extra ...kgo.Opt) (*kgo.Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(clientOpts(cfg), extra...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client for %v: %w", cfg.Brokers, err)
	}
	return cl, nil
}

// clientOpts is the one place Trawler's client options are built.
func clientOpts(cfg Config) []kgo.Opt {
	id := cfg.ClientID
	if id == "" {
		id = DefaultClientID
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(id),
		kgo.ProducerBatchCompression(kgo.SnappyCompression()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// Idempotence is franz-go's default with acks=all; the partitioner is
		// left at its default on purpose (murmur2 for keyed records).
		//
		// No KIP-714 client metrics: every client would push them to a
		// broker that asks (the embedded one does), lz4-compressing each
		// push into a fresh 4 MiB block, for numbers that the trawler_*
		// and kgo metrics on /metrics already give.
		kgo.DisableClientMetrics(),
	}
	if cfg.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(cfg.SessionTimeout))
	}
	if cfg.RebalanceTimeout > 0 {
		opts = append(opts, kgo.RebalanceTimeout(cfg.RebalanceTimeout))
	}
	return opts
}

// WithSlog returns a client option that logs through l. franz-go's info
// level (connections, group joins, metadata updates) becomes slog debug and
// its debug level (every request) goes below slog debug, so services stay
// quiet unless asked.
func WithSlog(l *slog.Logger) kgo.Opt {
	return kgo.WithLogger(kgoLogger{l: l})
}

// levelTrace sits below slog.LevelDebug for franz-go's per-request logs.
const levelTrace = slog.LevelDebug - 4

// kgoLogger adapts slog to kgo.Logger.
type kgoLogger struct{ l *slog.Logger }

// Level implements kgo.Logger.
func (k kgoLogger) Level() kgo.LogLevel {
	ctx := context.Background()
	switch {
	case k.l.Enabled(ctx, levelTrace):
		return kgo.LogLevelDebug
	case k.l.Enabled(ctx, slog.LevelDebug):
		return kgo.LogLevelInfo
	case k.l.Enabled(ctx, slog.LevelWarn):
		return kgo.LogLevelWarn
	case k.l.Enabled(ctx, slog.LevelError):
		return kgo.LogLevelError
	default:
		return kgo.LogLevelNone
	}
}

// Log implements kgo.Logger.
func (k kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	var lvl slog.Level
	switch level {
	case kgo.LogLevelError:
		lvl = slog.LevelError
	case kgo.LogLevelWarn:
		lvl = slog.LevelWarn
	case kgo.LogLevelInfo:
		lvl = slog.LevelDebug
	case kgo.LogLevelDebug:
		lvl = levelTrace
	default:
		return
	}
	k.l.Log(context.Background(), lvl, msg, keyvals...)
}
