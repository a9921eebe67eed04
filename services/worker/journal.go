package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/sheets"
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
			if strings.HasSuffix(ev.HopPath, string(messages.HopPrerequisite)) {
				// dns: and robots.txt: never admitted, and live settling
				// counts them in no total, so neither does a rebuild.
				continue
			}
			var size int64
			if ev.Size != nil {
				size = *ev.Size
			}
			out = append(out, frontier.Finished{URL: ev.URL, Status: ev.StatusCode, Bytes: size, Source: ev.Seed, At: r.Timestamp,
				Revisit: isRevisit(strings.Split(ev.Annotations, ","))})
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

// RebuildFrontier restores the stream's frontier from its journal. What
// launches attached lives in the same Redis and is restored first, from
// the launch messages the inscope journal holds (seeds, the redirect
// targets that became seeds, anything carrying sheets), in journal order:
// the seeds' scope, without which the rebuilt URIs' outlinks would be
// judged out of scope, and the sheets attached at their prefixes
// (ignoreRobots, noLimit, recrawl-*, scope sheets), which every worker
// reads at fetch time. Then the frontier is rebuilt (see frontier.Rebuild),
// each URI with the policy of its effective settings. A launch the
// frontier answered "seen" was not journalled, so sheets it changed are
// not restored; nor is anything older than the topics' retention.
func RebuildFrontier(ctx context.Context, rdb redis.UniversalClient, f *frontier.Frontier, j frontier.Journal, p profile.Profile, force bool) (frontier.RebuildReport, error) {
	// Refuse before writing anything, as frontier.Rebuild would.
	if empty, err := f.Empty(ctx); err != nil {
		return frontier.RebuildReport{}, err
	} else if !empty && !force {
		return frontier.RebuildReport{}, fmt.Errorf("rebuild: %w (use force to replay onto it)", frontier.ErrNotEmpty)
	}
	sc := scope.NewSeeds(rdb, f.Prefix())
	sh, err := sheets.New(ctx, p, sheets.Options{Redis: rdb, KeyPrefix: f.Prefix()})
	if err != nil {
		return frontier.RebuildReport{}, fmt.Errorf("rebuild: sheets: %w", err)
	}
	if err := restoreLaunches(ctx, j, sc, sh); err != nil {
		return frontier.RebuildReport{}, err
	}
	return frontier.Rebuild(ctx, f, j, func(l messages.Launch) frontier.Policy {
		return frontier.PolicyOf(sh.ForURL(l.URL).Profile)
	}, force)
}

// ReloadLaunchState makes this worker read the seeds and launch sheets in
// Redis again at once, without waiting for its periodic refresh: after
// RebuildFrontier restored them, before the rebuilt URIs are claimed.
func (w *Worker) ReloadLaunchState(ctx context.Context) error {
	if err := w.chain.seeds.Reload(ctx); err != nil {
		return err
	}
	if err := w.chain.sheets.Reload(ctx); err != nil {
		return err
	}
	return nil
}

// launchJournal is a journal that can list the launch messages among its
// admissions without decoding the rest (Journal does).
type launchJournal interface {
	Launches(ctx context.Context, fn func([]messages.Launch) error) error
}

// restoreLaunches adds the seeds of the journal's launch messages to the
// scope and attaches their sheets, in journal order, so that a later
// launch at a prefix replaces an earlier one as it did live.
func restoreLaunches(ctx context.Context, j frontier.Journal, sc *scope.Seeds, sh *sheets.Sheets) error {
	restore := func(ls []messages.Launch) error {
		for _, l := range ls {
			if !hasLaunchState(l) {
				continue
			}
			attach := sh.AttachLaunch
			if l.IsSeed && strings.HasSuffix(l.HopPath(), string(messages.HopRedirect)) {
				attach = sh.AttachLaunchIfUnset // a seed's redirect target, as live
			}
			if _, err := attach(ctx, l); err != nil {
				return fmt.Errorf("rebuild: %w", err)
			}
			if l.IsSeed {
				if err := sc.Add(ctx, l.URL, scope.SeedScopeFromSheets(l.Sheets)); err != nil {
					return fmt.Errorf("rebuild: %w", err)
				}
			}
		}
		return nil
	}
	if lj, ok := j.(launchJournal); ok {
		return lj.Launches(ctx, restore)
	}
	return j.Admitted(ctx, func(as []frontier.Admission) error {
		ls := make([]messages.Launch, len(as))
		for i, a := range as {
			ls[i] = a.Launch
		}
		return restore(ls)
	})
}

// hasLaunchState says a message carries something a launch keeps in
// Redis: a seed (its scope) or sheets.
func hasLaunchState(l messages.Launch) bool {
	return l.IsSeed || len(l.Sheets) > 0 || len(l.TargetSheet) > 0
}

// Byte patterns of an inscope record that is neither a seed nor carries
// sheets, as messages.AppendLaunch writes every record a worker journals
// (a discovered link): Launches skips those without decoding them.
var (
	plainNotSeed   = []byte(`"isSeed":false`)
	plainNoSheets  = []byte(`"sheets":[]`)
	plainHasTarget = []byte(`"targetSheet"`)
)

// Launches implements launchJournal: it passes the inscope records that
// carry launch state (seeds, sheets; see hasLaunchState) to fn, a poll at
// a time, in partition order.
func (j *Journal) Launches(ctx context.Context, fn func([]messages.Launch) error) error {
	return j.read(ctx, j.cfg.InScopeTopic(), func(recs []*kgo.Record) error {
		var out []messages.Launch
		for _, r := range recs {
			if bytes.Contains(r.Value, plainNotSeed) && bytes.Contains(r.Value, plainNoSheets) && !bytes.Contains(r.Value, plainHasTarget) {
				continue
			}
			l, err := messages.DecodeLaunch(r.Value)
			if err != nil {
				j.log.Warn("journal: inscope record skipped", "pos", position(r), "err", err)
				continue
			}
			if hasLaunchState(l) {
				out = append(out, l)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return fn(out)
	})
}
