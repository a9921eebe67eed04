package launcher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Defaults for BulkConfig.
const (
	DefaultCheckpointEvery = 20000
	DefaultBulkProgress    = 10 * time.Second
)

// BulkConfig configures a bulk load: a large seed list streamed into a
// tocrawl topic (the domain crawl's dc.tocrawl by default).
type BulkConfig struct {
	// Input is the seed list: a file, a directory of *.jsonl files or an
	// HTTP(S) URL. Each line is a URL (a bare host name is read as
	// http://host/), a crawl-feed JSON object, blank, or a "#" comment.
	Input string `yaml:"input"`
	// Crawl and Stream choose the topic, as in Config.
	Crawl  string `yaml:"crawl"`
	Stream string `yaml:"stream"`
	// ScopeFile, when set, receives the SURT prefix of every seed
	// ("+prefix" lines), replaced whole at the end of a successful load.
	ScopeFile string `yaml:"scope_file"`
	// Job names the load's checkpoint; empty derives it from Input.
	Job string `yaml:"job"`
	// Restart forgets the checkpoint and sends everything again.
	Restart bool `yaml:"restart"`
	// CheckpointEvery is how many input lines are sent between checkpoints
	// (each waits for the broker's acknowledgements); zero means
	// DefaultCheckpointEvery.
	CheckpointEvery int `yaml:"checkpoint_every"`
	// ProgressInterval paces the progress line; zero means
	// DefaultBulkProgress.
	ProgressInterval time.Duration `yaml:"progress_interval"`
}

// RegisterFlags registers the bulk load's flags on fs and sets the
// defaults.
func (c *BulkConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Input, "input", "", "seed list: a file, a directory of *.jsonl files or an HTTP(S) URL; one URL or crawl-feed JSON object per line")
	fs.StringVar(&c.Crawl, "crawl", CrawlDomain, `crawl to load into: "dc" (domain) or "fc" (frequent)`)
	fs.StringVar(&c.Stream, "stream", "npld", `frequent-crawl stream (ignored for dc)`)
	fs.StringVar(&c.ScopeFile, "scope-file", "", "write the seeds' SURT prefixes here (+prefix per line), replaced at the end of the load")
	fs.StringVar(&c.Job, "job", "", "checkpoint name for resuming (default: derived from --input)")
	fs.BoolVar(&c.Restart, "restart", false, "forget the checkpoint and send every seed again")
	fs.IntVar(&c.CheckpointEvery, "checkpoint-every", DefaultCheckpointEvery, "input lines between checkpoints (each waits for broker acknowledgements)")
	fs.DurationVar(&c.ProgressInterval, "progress-interval", DefaultBulkProgress, "log progress this often")
}

// Validate reports every configuration error at once.
func (c BulkConfig) Validate() error {
	var errs []error
	if strings.TrimSpace(c.Input) == "" {
		errs = append(errs, errors.New("no input given (--input)"))
	}
	feedLike := Config{Feeds: []string{"x"}, Crawl: c.Crawl, Stream: c.Stream, TimeZone: "UTC"}
	if err := feedLike.Validate(); err != nil {
		errs = append(errs, errors.Unwrap(err))
	}
	if c.CheckpointEvery < 0 {
		errs = append(errs, fmt.Errorf("checkpoint every %d lines: negative", c.CheckpointEvery))
	}
	if c.ProgressInterval < 0 {
		errs = append(errs, fmt.Errorf("progress interval %v: negative", c.ProgressInterval))
	}
	if strings.ContainsAny(c.Job, " \t\n") {
		errs = append(errs, fmt.Errorf("job %q: no spaces allowed", c.Job))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bulk config: %w", err)
	}
	return nil
}

// Topic is the topic the load writes to.
func (c BulkConfig) Topic() string {
	return Config{Crawl: c.Crawl, Stream: c.Stream}.Topic()
}

// JobName is Job, or a name derived from the input's absolute path or URL.
func (c BulkConfig) JobName() string {
	if c.Job != "" {
		return c.Job
	}
	in := c.Input
	if !isURL(in) {
		if abs, err := filepath.Abs(in); err == nil {
			in = abs
		}
	}
	sum := sha256.Sum256([]byte(in))
	return "input-" + hex.EncodeToString(sum[:8])
}

// AsyncProducer buffers records and reports their failures at Flush
// (pkg/kafka.Producer).
type AsyncProducer interface {
	ProduceAsync(ctx context.Context, topic, key string, value []byte)
	// Flush returns once every buffered record is acknowledged or failed,
	// with an error if any failed since the previous Flush.
	Flush(ctx context.Context) error
}

// BulkDeps are what a bulk load uses but does not own.
type BulkDeps struct {
	Producer    AsyncProducer // required
	KeyFunc     KeyFunc       // required (hostkey.ForURL)
	Checkpoints Checkpoints   // required: where resuming starts
	Logger      *slog.Logger  // nil discards
	Registerer  prometheus.Registerer
	Clock       Clock
	HTTPClient  *http.Client
}

// Checkpoint is where a bulk load got to: every line up to Line was sent
// and acknowledged. Hash identifies that line's content, so a checkpoint is
// never applied to a different input.
type Checkpoint struct {
	Line int
	Hash string
}

// Checkpoints stores bulk-load checkpoints by job name.
type Checkpoints interface {
	Load(ctx context.Context, job string) (cp Checkpoint, found bool, err error)
	Save(ctx context.Context, job string, cp Checkpoint) error
	Clear(ctx context.Context, job string) error
}

// RedisCheckpoints keeps each checkpoint as one Redis string
// "<line> <hash>" under prefix+job, with no expiry: a finished load keeps
// its checkpoint, so running it again sends only lines appended since.
type RedisCheckpoints struct {
	rdb    redis.Cmdable
	prefix string
}

// DefaultCheckpointPrefix is the Redis key prefix of bulk checkpoints.
const DefaultCheckpointPrefix = "trawler:launcher:bulk:"

// NewRedisCheckpoints stores checkpoints under prefix (empty:
// DefaultCheckpointPrefix) plus the topic, so the same job name in two
// crawls does not collide.
func NewRedisCheckpoints(rdb redis.Cmdable, prefix, topic string) *RedisCheckpoints {
	if prefix == "" {
		prefix = DefaultCheckpointPrefix
	}
	return &RedisCheckpoints{rdb: rdb, prefix: prefix + topic + ":"}
}

// Load implements Checkpoints.
func (c *RedisCheckpoints) Load(ctx context.Context, job string) (Checkpoint, bool, error) {
	v, err := c.rdb.Get(ctx, c.prefix+job).Result()
	if errors.Is(err, redis.Nil) {
		return Checkpoint{}, false, nil
	}
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("load bulk checkpoint %s: %w", job, err)
	}
	line, hash, _ := strings.Cut(v, " ")
	n, err := strconv.Atoi(line)
	if err != nil || n < 0 || hash == "" {
		return Checkpoint{}, false, fmt.Errorf("load bulk checkpoint %s: malformed value %q (want \"<line> <hash>\"; --restart clears it)", job, v)
	}
	return Checkpoint{Line: n, Hash: hash}, true, nil
}

// Save implements Checkpoints.
func (c *RedisCheckpoints) Save(ctx context.Context, job string, cp Checkpoint) error {
	if err := c.rdb.Set(ctx, c.prefix+job, strconv.Itoa(cp.Line)+" "+cp.Hash, 0).Err(); err != nil {
		return fmt.Errorf("save bulk checkpoint %s at line %d: %w", job, cp.Line, err)
	}
	return nil
}

// Clear implements Checkpoints.
func (c *RedisCheckpoints) Clear(ctx context.Context, job string) error {
	if err := c.rdb.Del(ctx, c.prefix+job).Err(); err != nil {
		return fmt.Errorf("clear bulk checkpoint %s: %w", job, err)
	}
	return nil
}
