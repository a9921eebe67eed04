package provenance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/docfind"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

func newDocState(cfg Config, d Deps) (*docState, error) {
	targets, bad, err := docfind.LoadWatched(cfg.Watched)
	if err != nil {
		return nil, fmt.Errorf("provenance: %w", err)
	}
	for _, e := range bad {
		d.Logger.Warn("watched export: line skipped", "err", e)
	}
	return &docState{finder: docfind.NewFinder(targets, cfg.docWARCDirs(), d.Redis, cfg.Crawl), file: cfg.DocumentsFile()}, nil
}

// consumeDocs runs the document finder's consumer group. Undecodable
// events are dead-lettered by the statistics group already; this one
// only skips them.
func (s *Service) consumeDocs(ctx context.Context) error {
	c, err := kafka.NewConsumer(s.d.Kafka, kafka.ConsumerOptions[messages.Crawled]{
		Group: s.cfg.DocsGroup(), Topics: []string{s.cfg.CrawledTopic()},
		Decode: decode, Handle: s.handleDocs, MaxBatch: s.cfg.Batch, Logger: s.log.With("part", "docfinder"),
		Registerer: prometheus.WrapRegistererWith(prometheus.Labels{"consumer": "docfinder"}, s.d.Registerer),
	})
	if err != nil {
		return fmt.Errorf("docfinder consumer: %w", err)
	}
	return c.Run(ctx)
}

// handleDocs publishes the batch's new documents, appends them to the
// JSONL file, then marks their digests seen. A crash between publishing
// and marking publishes them again on redelivery (at-least-once; loaders
// upsert by URL and digest); a relaunch never does, the digests being
// marked.
func (s *Service) handleDocs(ctx context.Context, batch []kafka.Item[messages.Crawled]) error {
	evs := make([]messages.Crawled, len(batch))
	for i, it := range batch {
		evs[i] = it.Value
	}
	docs, err := s.docs.finder.Find(ctx, evs)
	if err != nil || len(docs) == 0 {
		return err
	}
	var lines []byte
	for _, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("docfinder: encode %s: %w", d.URL, err)
		}
		if err := s.publish(ctx, s.cfg.DocumentsTopic(), d.URL, b); err != nil {
			s.m.errors.WithLabelValues("documents").Inc()
			return err
		}
		lines = append(append(lines, b...), '\n')
	}
	if err := s.docs.append(lines); err != nil {
		s.m.errors.WithLabelValues("documents").Inc()
		return err
	}
	if err := s.docs.finder.Mark(ctx, docs); err != nil {
		return err
	}
	s.m.documents.Add(float64(len(docs)))
	return nil
}

// append adds lines to the JSONL file and syncs it.
func (d *docState) append(lines []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(d.file), 0o755); err != nil {
		return fmt.Errorf("docfinder: %w", err)
	}
	f, err := os.OpenFile(d.file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("docfinder: %w", err)
	}
	_, err = f.Write(lines)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("docfinder: write %s: %w", d.file, err)
	}
	return nil
}
