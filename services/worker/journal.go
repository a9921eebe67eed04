package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/scope"
)

// Journal reads a stream's frontier journal from Kafka (ARCHITECTURE.md
// 5.5): the crawled topic and the stream's inscope topic, from their start
// to their ends as they were when each read began. It implements
// frontier.Journal. Records that do not decode are logged with their
// position and skipped.
type Journal struct {
	kc        kafka.Config
	cfg       Config
	crawlName string
	log       *slog.Logger
}

// NewJournal reads the journal of the stream cfg names. The crawled topic
// is shared by the streams of a crawl, so only events whose crawl_name is
// crawlName (the profile's crawl.name) count; "" takes every event.
func NewJournal(kc kafka.Config, cfg Config, crawlName string, log *slog.Logger) *Journal {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Journal{kc: kc, cfg: cfg, crawlName: crawlName, log: log}
}

// Crawled implements frontier.Journal.
func (j *Journal) Crawled(ctx context.Context, fn func([]frontier.Finished) error) error {
	return j.read(ctx, j.cfg.CrawledTopic(), func(recs []*kgo.Record) error {
		out := make([]frontier.Finished, 0, len(recs))
		for _, r := range recs {
			ev, err := messages.DecodeCrawled(r.Value)
			if err != nil {
				j.log.Warn("journal: crawled event skipped", "pos", position(r), "err", err)
				continue
			}
			if j.crawlName != "" && ev.CrawlName != j.crawlName {
				continue
			}
			var size int64
			if ev.Size != nil {
				size = *ev.Size
			}
			out = append(out, frontier.Finished{URL: ev.URL, Status: ev.StatusCode, Bytes: size, Source: ev.Seed, At: r.Timestamp})
		}
		return fn(out)
	})
}

// Admitted implements frontier.Journal.
func (j *Journal) Admitted(ctx context.Context, fn func([]frontier.Admission) error) error {
	return j.read(ctx, j.cfg.InScopeTopic(), func(recs []*kgo.Record) error {
		out := make([]frontier.Admission, 0, len(recs))
		for _, r := range recs {
			l, err := messages.DecodeLaunch(r.Value)
			if err != nil {
				j.log.Warn("journal: inscope record skipped", "pos", position(r), "err", err)
				continue
			}
			out = append(out, frontier.Admission{Launch: l, At: r.Timestamp})
		}
		return fn(out)
	})
}

// Events passes every crawled event of the crawl so far (up to the end
// offsets when it starts) to fn, for reports; undecodable records are
// counted in bad and skipped.
func (j *Journal) Events(ctx context.Context, fn func(messages.Crawled)) (bad int, err error) {
	err = j.read(ctx, j.cfg.CrawledTopic(), func(recs []*kgo.Record) error {
		for _, r := range recs {
			ev, err := messages.DecodeCrawled(r.Value)
			if err != nil {
				bad++
				j.log.Warn("undecodable crawled event skipped", "at", position(r), "err", err)
				continue
			}
			fn(ev)
		}
		return nil
	})
	return bad, err
}

// HasData reports whether the journal holds anything: a data directory or
// cluster that saw an earlier crawl of this stream.
func (j *Journal) HasData(ctx context.Context) (bool, error) {
	cl, err := kafka.NewClient(j.kc)
	if err != nil {
		return false, err
	}
	defer cl.Close()
	for _, topic := range []string{j.cfg.InScopeTopic(), j.cfg.CrawledTopic()} {
		ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
		if err != nil {
			return false, fmt.Errorf("journal end offsets %s: %w", topic, err)
		}
		has := false
		ends.Each(func(o kadm.ListedOffset) { has = has || o.Offset > 0 })
		if has {
			return true, nil
		}
	}
	return false, nil
}

// journalStall bounds the wait for the next records of a journal read.
const journalStall = 30 * time.Second

// read passes topic's records to fn a poll at a time, from the start up to
// the end offsets listed when it began.
func (j *Journal) read(ctx context.Context, topic string, fn func([]*kgo.Record) error) error {
	cl, err := kafka.NewClient(j.kc, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("journal end offsets %s: %w", topic, err)
	}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
		}
	})
	for len(left) > 0 {
		pollCtx, cancel := context.WithTimeout(ctx, journalStall)
		fs := cl.PollFetches(pollCtx)
		stalled := pollCtx.Err() != nil
		cancel()
		if err := ctx.Err(); err != nil {
			return err
		}
		if fs.NumRecords() == 0 && stalled {
			return fmt.Errorf("journal read %s: no records for %v with %d partitions unfinished", topic, journalStall, len(left))
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				ferr = fmt.Errorf("journal read %s/%d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		var batch []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := left[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			batch = append(batch, r)
			if r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
		if len(batch) > 0 {
			if err := fn(batch); err != nil {
				return err
			}
		}
	}
	return nil
}

func position(r *kgo.Record) string {
	return fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset)
}

// RebuildFrontier restores the stream's frontier from its journal with
// every URI given the profile's policy (see frontier.Rebuild). The seeds
// met in the inscope journal go back into the scope's seed set first: it
// lives in the same Redis, and without it the rebuilt URIs' outlinks would
// be judged out of scope.
func RebuildFrontier(ctx context.Context, rdb redis.UniversalClient, f *frontier.Frontier, j frontier.Journal, p profile.Profile, force bool) (frontier.RebuildReport, error) {
	pol := frontier.PolicyOf(p)
	sc := scope.NewSeeds(rdb, f.Prefix())
	return frontier.Rebuild(ctx, f, seedJournal{Journal: j, scope: sc}, func(messages.Launch) frontier.Policy { return pol }, force)
}

// seedJournal adds the seeds of the admissions it reads to the scope.
type seedJournal struct {
	frontier.Journal
	scope *scope.Seeds
}

func (s seedJournal) Admitted(ctx context.Context, fn func([]frontier.Admission) error) error {
	return s.Journal.Admitted(ctx, func(as []frontier.Admission) error {
		for _, a := range as {
			if a.Launch.IsSeed {
				if err := s.scope.Add(ctx, a.Launch.URL, scope.SeedScopeFromSheets(a.Launch.Sheets)); err != nil {
					return err
				}
			}
		}
		return fn(as)
	})
}
