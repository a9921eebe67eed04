package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
)

// KafkaOptions configures StartKafka.
type KafkaOptions struct {
	// DataDir is where the broker keeps topics, records and committed group
	// offsets, reloaded on the next start. Empty keeps everything in
	// memory (tests only: nothing survives Close).
	DataDir string
	// Addr is the loopback host:port to listen on, e.g. "127.0.0.1:19092".
	// Empty picks a free port on 127.0.0.1. Clients see exactly this address
	// in metadata, so it must be one they can dial.
	Addr string
	// Listener, when set, is a loopback listener already bound (standalone
	// binds every listener before it starts anything, so a taken port
	// fails at once); the broker serves on it and Addr is ignored. The
	// broker owns it.
	Listener net.Listener
	// DefaultPartitions is used for topics created with -1 partitions (or
	// auto-created). Zero keeps kfake's default of 10.
	DefaultPartitions int
	// AllowAutoTopicCreation lets metadata requests create unknown topics.
	// Off by default: a typo in a topic name should fail, not create a topic
	// nobody reads.
	AllowAutoTopicCreation bool
	// SyncWrites fsyncs every produced batch. Without it, as with Kafka's
	// defaults, batches are durable once the OS flushes them or the broker
	// closes cleanly; a machine crash may lose the last seconds.
	SyncWrites bool
	// Logger receives the broker's warnings and errors. Nil discards them.
	Logger *slog.Logger
}

// Kafka is a running embedded one-broker Kafka.
type Kafka struct {
	cluster *kfake.Cluster
	lock    *dirLock
	dataDir string
	logger  *slog.Logger
	errs    *errorLog

	closeOnce sync.Once
	closeErr  error
}

// StartKafka starts the broker, reloading state from o.DataDir if it holds
// any. It fails with ErrDataDirInUse if another broker uses the directory.
func StartKafka(ctx context.Context, o KafkaOptions) (*Kafka, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start embedded kafka: %w", err)
	}
	logger := discardLogger(o.Logger).With("component", "embedded-kafka")
	want := o.Addr
	if o.Listener != nil {
		want = o.Listener.Addr().String()
	}
	addr, err := loopbackAddr(want, "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start embedded kafka: %w", err)
	}
	given := o.Listener
	if o.DefaultPartitions < 0 {
		return nil, fmt.Errorf("start embedded kafka: default partitions %d must not be negative", o.DefaultPartitions)
	}

	k := &Kafka{dataDir: o.DataDir, logger: logger, errs: &errorLog{}}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		// kfake always asks for 127.0.0.1:<port>; we listen where the
		// operator asked instead, which is also what metadata advertises.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			if ln := given; ln != nil {
				given = nil
				return ln, nil
			}
			return net.Listen(network, addr)
		}),
		kfake.WithLogger(kfakeLogger{l: logger, errs: k.errs}),
	}
	if o.DefaultPartitions > 0 {
		opts = append(opts, kfake.DefaultNumPartitions(o.DefaultPartitions))
	}
	if o.AllowAutoTopicCreation {
		opts = append(opts, kfake.AllowAutoTopicCreation())
	}
	if o.DataDir != "" {
		if k.lock, err = lockDir(o.DataDir); err != nil {
			return nil, fmt.Errorf("start embedded kafka: %w", err)
		}
		opts = append(opts, kfake.DataDir(o.DataDir))
		if o.SyncWrites {
			opts = append(opts, kfake.SyncWrites())
		}
	}

	k.cluster, err = kfake.NewCluster(opts...)
	if err != nil {
		_ = k.lock.unlock()
		return nil, fmt.Errorf("start embedded kafka (data dir %q, listen %s): %w", o.DataDir, addr, err)
	}
	logger.Info("embedded kafka started", "brokers", k.Brokers(), "data_dir", o.DataDir)
	return k, nil
}

// Brokers returns the seed addresses clients should use.
func (k *Kafka) Brokers() []string {
	return k.cluster.ListenAddrs()
}

// Close stops the broker, writes its state to the data directory and
// releases the directory. Clients should be closed first: their in-flight
// requests fail once the listener is gone. Safe to call more than once.
func (k *Kafka) Close() error {
	k.closeOnce.Do(func() {
		// kfake saves its state inside Close and only logs a failure to do
		// so; errorLog catches those lines so the caller hears of them.
		k.errs.reset()
		k.cluster.Close()
		var saveErr error
		if msgs := k.errs.reset(); len(msgs) > 0 && k.dataDir != "" {
			saveErr = fmt.Errorf("embedded kafka: saving state to %s: %s", k.dataDir, strings.Join(msgs, "; "))
		}
		k.closeErr = errors.Join(saveErr, k.lock.unlock())
		k.logger.Info("embedded kafka stopped", "data_dir", k.dataDir, "err", k.closeErr)
	})
	return k.closeErr
}

// errorLog keeps the error-level messages kfake logs.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

// add records one message, keeping at most a handful.
func (e *errorLog) add(msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.msgs) < 8 {
		e.msgs = append(e.msgs, msg)
	}
}

// reset returns the recorded messages and forgets them.
func (e *errorLog) reset() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	msgs := e.msgs
	e.msgs = nil
	return msgs
}

// kfakeLogger adapts slog to kfake's Logger. kfake logs every request at
// info level, which is debug detail for us.
type kfakeLogger struct {
	l    *slog.Logger
	errs *errorLog
}

// Logf implements kfake.Logger.
func (k kfakeLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	var lvl slog.Level
	switch level {
	case kfake.LogLevelError:
		lvl = slog.LevelError
		k.errs.add(fmt.Sprintf(format, args...))
	case kfake.LogLevelWarn:
		lvl = slog.LevelWarn
	case kfake.LogLevelNone:
		return
	default:
		lvl = slog.LevelDebug
	}
	ctx := context.Background()
	if !k.l.Enabled(ctx, lvl) {
		return
	}
	k.l.Log(ctx, lvl, fmt.Sprintf(format, args...))
}
