package api

import (
	"context"
	"fmt"
	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"log/slog"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/explain"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// Setup is what a worker-like role (worker, standalone) hands over to get
// its API.
type Setup struct {
	Profile  profile.Profile
	Redis    redis.UniversalClient
	Frontier *frontier.Frontier
	// Kafka is the cluster control commands are produced to; a client of
	// its own is opened, so commands never queue behind crawl output.
	Kafka kafka.Config
	// Crawl and Stream name the crawl stream (the domain crawl, dc, has
	// no streams: its Stream is ignored).
	Crawl, Stream string
	// BaseDir resolves the profile's relative scope files.
	BaseDir string
	Version string
	// History is the CDX index to read capture history from; nil: none.
	History      explain.History
	LimitReached func() string
	Logger       *slog.Logger
}

// Build returns the API handler for s and a function releasing what it
// opened (the explainer's scope engine, the control producer).
func Build(ctx context.Context, s Setup) (http.Handler, func(), error) {
	d, release, err := BuildDeps(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	return Handler(d), release, nil
}

// BuildDeps opens what the API reads and drives for s, for Handler and for
// the operator console (pkg/console), which serves the same crawl from the
// same explainer, producer and stores; the function returned releases them.
func BuildDeps(ctx context.Context, s Setup) (Deps, func(), error) {
	if s.Crawl == "dc" {
		s.Stream = "" // its history is the crawl's own, as the worker reads it
	}
	ex, err := explain.New(ctx, explain.Config{Profile: s.Profile, Redis: s.Redis, Frontier: s.Frontier, Crawl: s.Crawl,
		Stream: s.Stream, BaseDir: s.BaseDir, Version: s.Version, History: s.History, Logger: s.Logger})
	if err != nil {
		return Deps{}, nil, fmt.Errorf("admin API: %w", err)
	}
	kc := s.Kafka
	kc.ClientID += "-admin-api"
	cl, err := kafka.NewClient(kc)
	if err != nil {
		_ = ex.Close()
		return Deps{}, nil, fmt.Errorf("admin API control producer: %w", err)
	}
	d := Deps{Crawl: s.Crawl, Frontier: s.Frontier, Limits: s.Profile.Limits, LimitReached: s.LimitReached,
		Explainer: ex, Send: KafkaSender(cl, s.Crawl), Acks: RedisAcks(s.Redis, s.Crawl), Logger: s.Logger,
		HarvestStats: harveststats.New(s.Redis, s.Crawl, nil)}
	return d, func() {
		cl.Close()
		_ = ex.Close()
	}, nil
}
