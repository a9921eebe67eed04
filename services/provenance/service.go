// Package provenance is the provenance role (docs/provenance.md): over a
// crawl's crawled events it keeps NetarchiveSuite-style harvest statistics
// per launch and domain (pkg/harveststats), seals a launch once nothing of
// it is queued or in flight (or the crawl ends), then publishes its
// statistics on <crawl>.harveststats, writes them and Heritrix's reports
// under the data directory, and writes its metadata WARC
// (pkg/metawarc), announced on <crawl>.warcs like any WARC. With a watched
// export it also runs the document finder (pkg/docfind), publishing
// documents on <crawl>.documents and in a JSONL file.
//
// Consumption is at-least-once and every effect is idempotent: counting is
// once per URL and launch (once per topic offset for a streaming crawl,
// whose launches are built from a disk spool by external sort: spool.go,
// stream.go), a sealed launch's metadata WARC has one
// deterministic name and is written whole or not at all, and documents
// are once per digest. Undecodable events go to <crawl>.dlq.
package provenance

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/internal/together"
	"github.com/trawler-crawl/trawler/pkg/docfind"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/metawarc"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// TargetCounter reports what each target (source tag) has queued and in
// flight: *frontier.Frontier.
type TargetCounter interface {
	TargetCounts(ctx context.Context) ([]frontier.TargetCount, error)
}

// Deps are the service's dependencies.
type Deps struct {
	Kafka kafka.Config
	Redis redis.UniversalClient
	// Frontier tells when a launch has nothing left. Nil: launches are
	// sealed only by EndCrawl (or when a newer launch supersedes them).
	Frontier TargetCounter
	// Profile is the effective profile, written into metadata WARCs.
	Profile profile.Profile
	// Version is the software version for warcinfo.
	Version    string
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Service is the provenance role.
type Service struct {
	cfg   Config
	d     Deps
	log   *slog.Logger
	m     *metrics
	store *harveststats.Store
	meta  metawarc.Config
	out   *kgo.Client // produces stats, notices, documents
	outMu sync.Mutex  // guards sealing and published: the loop and EndCrawl
	// spoolMu orders a streaming batch's sealed check and append against
	// the renaming of a sealed launch's spool (spool.go).
	spoolMu sync.Mutex
	docs    *docState
	// published is when each running launch's statistics were last
	// published, so an idle one is not published again.
	published map[harveststats.Launch]time.Time
	// recovered are the metadata directories whose staging was cleared
	// at their first use (metaFor).
	recovered map[string]bool
	ready     atomic.Bool
	running   atomic.Bool
}

// New validates the configuration and builds the service; Run connects.
func New(cfg Config, d Deps) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := d.Kafka.Validate(); err != nil {
		return nil, fmt.Errorf("provenance: %w", err)
	}
	if d.Redis == nil {
		return nil, errors.New("provenance: Redis is required")
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	m, err := newMetrics(d.Registerer)
	if err != nil {
		return nil, fmt.Errorf("provenance metrics: %w", err)
	}
	// A fixed default, not the machine's name: a metadata WARC's name must
	// come out the same after a restart on another pod, or a retry would
	// not find the file it wrote before a crash.
	host := cfg.Hostname
	if host == "" {
		host = "provenance"
	}
	prefix := cfg.WARCPrefix
	if prefix == "" {
		prefix = d.Profile.WARC.Prefix
	}
	if prefix == "" {
		prefix = "TRAWLER"
	}
	s := &Service{cfg: cfg, d: d, log: d.Logger, m: m, store: harveststats.New(d.Redis, cfg.Crawl, d.Now),
		published: map[harveststats.Launch]time.Time{}, recovered: map[string]bool{},
		meta: metawarc.Config{Dir: cfg.warcDir(), Prefix: prefix + "-METADATA", Hostname: host,
			CrawlName: d.Profile.Crawl.Name, Operator: d.Profile.Crawl.Operator, Software: software(d.Version),
			RobotsPolicy: d.Profile.Robots.Policy, UserAgent: d.Profile.UserAgent(d.Version)}}
	if cfg.Watched != "" {
		if s.docs, err = newDocState(cfg, d); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Store is the statistics store (for queries).
func (s *Service) Store() *harveststats.Store { return s.store }

// Run consumes until ctx is canceled. It first finishes what a crash left
// (staging files, launches sealed but not written), then runs the
// statistics consumer, the sealing loop and, with a watched export, the
// document finder. Run may be called once.
func (s *Service) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("provenance: Run called twice")
	}
	if err := metawarc.Recover(s.meta.Dir, s.log); err != nil {
		return err
	}
	s.recovered[s.meta.Dir] = true
	if s.streaming() {
		if err := s.dropSpools(ctx); err != nil {
			return err
		}
	}
	var err error
	if s.out, err = kafka.NewClient(s.d.Kafka, producerOpts(s.log)...); err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	defer s.out.Close()
	s.ready.Store(true)
	parts := []func(context.Context) error{s.consume, s.sealLoop}
	if s.docs != nil {
		parts = append(parts, s.consumeDocs)
	}
	return together.Run(ctx, parts...)
}

// decode is the consumers' Decode: an event that does not decode goes to
// the dead-letter topic.
func decode(r *kgo.Record) (messages.Crawled, error) { return messages.DecodeCrawled(r.Value) }

// consume runs the statistics consumer.
func (s *Service) consume(ctx context.Context) error {
	c, err := kafka.NewConsumer(s.d.Kafka, kafka.ConsumerOptions[messages.Crawled]{
		Group: s.cfg.Group(), Topics: []string{s.cfg.CrawledTopic()}, DLQTopic: s.cfg.DLQTopic(),
		Decode: decode, Handle: s.handle, MaxBatch: s.cfg.Batch, Logger: s.log,
		Registerer: prometheus.WrapRegistererWith(prometheus.Labels{"consumer": "provenance"}, s.d.Registerer),
	})
	if err != nil {
		return fmt.Errorf("provenance consumer: %w", err)
	}
	return c.Run(ctx)
}

// streaming: the profile builds launches as streams (spool.go, stream.go).
func (s *Service) streaming() bool { return s.d.Profile.Provenance.Streaming }

// handle counts a batch.
func (s *Service) handle(ctx context.Context, batch []kafka.Item[messages.Crawled]) error {
	if s.streaming() {
		return s.handleStream(ctx, batch)
	}
	evs := make([]messages.Crawled, len(batch))
	for i, it := range batch {
		evs[i] = it.Value
	}
	if err := s.store.Record(ctx, evs); err != nil {
		s.m.errors.WithLabelValues("record").Inc()
		return err
	}
	s.m.events.Add(float64(len(evs)))
	return nil
}

// sealLoop seals launches as they complete and writes their provenance.
func (s *Service) sealLoop(ctx context.Context) error {
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("provenance check", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick seals every launch that has completed (nothing queued or in flight
// for Settle, or superseded by a newer launch of its source) and writes
// the provenance of every sealed launch not yet written.
func (s *Service) Tick(ctx context.Context) error {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	active, err := s.store.Active(ctx)
	if err != nil {
		return err
	}
	var left map[string]int64
	if s.d.Frontier != nil && len(active) > 0 {
		counts, err := s.d.Frontier.TargetCounts(ctx)
		if err != nil {
			return fmt.Errorf("provenance: target counts: %w", err)
		}
		left = map[string]int64{}
		for _, c := range counts {
			src := c.Source
			if s.streaming() {
				// A streaming launch is every target's.
				src = harveststats.CrawlSource
			}
			left[src] += c.Queued + c.InFlight
		}
	}
	now := s.d.Now()
	for _, a := range active {
		// A launch ends when nothing of its target is left, or when a later
		// launch of the target has begun: at once if its events name no
		// launch (from then on the source's events count in the new one),
		// else once its own URIs have been quiet for Settle.
		quiet := now.Sub(a.LastActivity) >= s.cfg.Settle
		done := a.Superseded && (!a.Named || quiet) ||
			(left != nil && left[a.Launch.Source] == 0 && quiet)
		if !done {
			continue
		}
		if err := s.store.Seal(ctx, a.Launch, harveststats.StateCompleted); err != nil {
			return err
		}
		s.m.sealed.WithLabelValues(harveststats.StateCompleted).Inc()
		delete(s.published, a.Launch)
		s.log.Info("launch completed", "source", a.Launch.Source, "launch", a.Launch.Timestamp)
	}
	if err := s.writePending(ctx); err != nil {
		return err
	}
	if err := s.expire(ctx, now); err != nil {
		return err
	}
	return s.publishRunning(ctx)
}

// expire drops from Redis the statistics of launches written longer ago
// than the profile's provenance.keepSealedDays (their metadata WARCs keep
// them), so Redis does not grow with every launch.
func (s *Service) expire(ctx context.Context, now time.Time) error {
	days := s.d.Profile.Provenance.KeepSealedDays
	if days <= 0 {
		return nil
	}
	n, err := s.store.Expire(ctx, now.Add(-time.Duration(days)*24*time.Hour))
	if err != nil {
		return err
	}
	s.m.expired.Add(float64(n))
	if n > 0 {
		s.log.Info("statistics of written launches dropped from Redis (their metadata WARCs keep them)",
			"launches", n, "keepSealedDays", days)
	}
	return nil
}

// publishRunning publishes the statistics of the running launches that
// had events since they were last published, so <crawl>.harveststats
// shows a launch as it runs (state running), not only once sealed.
func (s *Service) publishRunning(ctx context.Context) error {
	active, err := s.store.Active(ctx)
	if err != nil {
		return err
	}
	for _, a := range active {
		if last, ok := s.published[a.Launch]; ok && !a.LastActivity.After(last) {
			continue
		}
		st, err := s.store.Stats(ctx, a.Launch)
		if err != nil {
			return err
		}
		js, err := json.Marshal(st)
		if err != nil {
			return fmt.Errorf("provenance: encode statistics of %s: %w", a.Launch, err)
		}
		if err := s.publishStats(ctx, a.Launch, st, js); err != nil {
			return err
		}
		s.published[a.Launch] = a.LastActivity
	}
	return nil
}

// EndCrawl seals every launch still active in state (running when the
// crawl stopped with work left, terminated, or the crawl limit that ended
// it) and writes the provenance of all sealed launches. It first waits,
// up to ctx, until the statistics consumer has caught up with the crawled
// topic, so the last events are counted. Run must be running.
func (s *Service) EndCrawl(ctx context.Context, state string) error {
	if !s.ready.Load() {
		return errors.New("provenance: EndCrawl before Run")
	}
	if err := s.waitCaughtUp(ctx); err != nil {
		return err
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	active, err := s.store.Active(ctx)
	if err != nil {
		return err
	}
	for _, a := range active {
		st := state
		if a.Superseded {
			st = harveststats.StateCompleted
		}
		if err := s.store.Seal(ctx, a.Launch, st); err != nil {
			return err
		}
		s.m.sealed.WithLabelValues(st).Inc()
	}
	return s.writePending(ctx)
}

// writePending writes the provenance of the sealed launches not done.
func (s *Service) writePending(ctx context.Context) error {
	pending, err := s.store.Sealed(ctx)
	if err != nil {
		return err
	}
	ls := slices.SortedFunc(maps.Keys(pending), func(a, b harveststats.Launch) int { return cmp.Compare(a.Key(), b.Key()) })
	var errs []error
	if s.streaming() {
		for _, l := range ls {
			if err := s.writeStreamLaunch(ctx, l); err != nil {
				s.m.errors.WithLabelValues("seal").Inc()
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	// Launches are loaded in groups, their crawl.log lines selected in one
	// pass over the logs per group, with at most maxPendingEvents events
	// in memory (a crawl's end seals every launch at once).
	for len(ls) > 0 {
		n, events := 0, int64(0)
		for n < len(ls) && (n == 0 || events < maxPendingEvents) {
			c, err := s.store.EventCount(ctx, ls[n])
			if err != nil {
				return err
			}
			events += c
			n++
		}
		group, err := s.loadPending(ctx, ls[:n])
		ls = ls[n:]
		if err != nil {
			s.m.errors.WithLabelValues("seal").Inc()
			errs = append(errs, err)
			continue
		}
		for _, p := range group {
			if err := s.writeLaunch(ctx, p); err != nil {
				s.m.errors.WithLabelValues("seal").Inc()
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// maxPendingEvents bounds the events of the launches written together.
const maxPendingEvents = 1 << 20

// docState is the document finder's.
type docState struct {
	finder *docfind.Finder
	file   string
	mu     sync.Mutex // guards the JSONL file
}

// Counters adds up the target counts of several frontiers (the frequent
// crawl's two streams).
type Counters []TargetCounter

// TargetCounts implements TargetCounter.
func (cs Counters) TargetCounts(ctx context.Context) ([]frontier.TargetCount, error) {
	var out []frontier.TargetCount
	for _, c := range cs {
		tc, err := c.TargetCounts(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, tc...)
	}
	return out, nil
}

// software is the warcinfo software field, as the workers write it.
func software(version string) string {
	host, _ := os.Hostname()
	return "trawler/" + version + " (" + host + ")"
}
