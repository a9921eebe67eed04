package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/services/provenance"
)

const provenanceUsage = `usage: trawler provenance [flags]          run the role: harvest statistics, metadata WARCs, document finder
       trawler provenance stats [--crawl fc|dc] [--redis ADDR] [--source TAG] [--launch TS] [--json]
stats lists the launches and their states, or prints one launch's statistics
(per domain: URIs by outcome, novel and duplicate objects and bytes, first and
last fetch, stop reason). See docs/provenance.md.`

// runProvenance runs the provenance role, or its stats query.
func runProvenance(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "stats" {
		return runProvenanceStats(ctx, args[1:], stdout, stderr)
	}
	fs := newFlagSet("provenance", stderr)
	var sf serviceFlags
	var pc provenance.Config
	sf.register(fs)
	pc.RegisterFlags(fs)
	env, rdb, stop, err := sf.start(ctx, fs, args, stderr, "provenance", func() error { return pc.Validate() })
	if err != nil {
		return err
	}
	defer stop()
	counter, err := crawlFrontiers(ctx, rdb, pc.Crawl, env.profile)
	if err != nil {
		return err
	}
	kc := sf.kc
	kc.ClientID = "trawler-provenance"
	s, err := provenance.New(pc, provenance.Deps{Kafka: kc, Redis: rdb, Frontier: counter, Profile: env.profile,
		Version: buildVersion(), Logger: env.log, Registerer: env.reg})
	if err != nil {
		return err
	}
	err = s.Run(ctx)
	env.log.Info("stopped", "err", err)
	return err
}

// crawlFrontiers is every frontier of a crawl (both streams of fc), whose
// per-target counts say when a launch has nothing left. Each must have
// the profile's shard count: with another, the counts would read empty
// shards and launches would be sealed early.
func crawlFrontiers(ctx context.Context, rdb redis.UniversalClient, crawl string, p profile.Profile) (provenance.TargetCounter, error) {
	names := []string{"dc"}
	if crawl == "fc" {
		names = []string{"fc-npld", "fc-bypm"}
	}
	var out provenance.Counters
	for _, n := range names {
		f, err := frontier.New(rdb, n, frontier.OptionsFrom(p))
		if err != nil {
			return nil, fmt.Errorf("provenance: frontier %s: %w", n, err)
		}
		if err := f.CheckLayout(ctx); err != nil {
			return nil, fmt.Errorf("provenance: %w", err)
		}
		out = append(out, f)
	}
	return out, nil
}

// runProvenanceStats prints launches or one launch's statistics from Redis.
func runProvenanceStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("provenance stats", stderr)
	var rc redisconn.Config
	rc.RegisterFlags(fs)
	crawl := fs.String("crawl", "fc", "crawl: fc or dc")
	source := fs.String("source", "", "source tag of the launch (empty: list the launches)")
	launch := fs.String("launch", "", "launch timestamp (14 digits; empty for a source launched without one)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		fmt.Fprintln(stderr, provenanceUsage)
		return err
	}
	if err := rc.Validate(); err != nil {
		return err
	}
	rdb, err := redisconn.Open(ctx, rc)
	if err != nil {
		return err
	}
	defer rdb.Close()
	store := harveststats.New(rdb, *crawl, nil)
	if *source == "" {
		ls, err := store.Launches(ctx)
		if err != nil {
			return err
		}
		keys := make([]harveststats.Launch, 0, len(ls))
		for l := range ls {
			keys = append(keys, l)
		}
		slices.SortFunc(keys, func(a, b harveststats.Launch) int {
			if a.Key() < b.Key() {
				return -1
			}
			return 1
		})
		if *asJSON {
			type row struct {
				harveststats.Launch
				State string `json:"state"`
			}
			rows := make([]row, len(keys))
			for i, l := range keys {
				rows[i] = row{l, ls[l]}
			}
			return json.NewEncoder(stdout).Encode(rows)
		}
		for _, l := range keys {
			ts := l.Timestamp
			if ts == "" {
				ts = "-"
			}
			fmt.Fprintf(stdout, "%s %s %s\n", ts, ls[l], l.Source)
		}
		return nil
	}
	st, err := store.Stats(ctx, harveststats.Launch{Source: *source, Timestamp: *launch})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	_, err = stdout.Write(st.Text())
	return err
}
