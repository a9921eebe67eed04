package main

import (
	"cmp"
	"context"
	"io"

	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/services/renderer"
)

func runRenderer(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlagSet("renderer", stderr)
	var c common
	var rc renderer.Config
	var kc kafka.Config
	var rdc redisconn.Config
	c.register(fs, ":9100")
	rc.RegisterFlags(fs)
	kc.RegisterFlags(fs)
	rdc.RegisterFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := errorsJoin(rc.Validate(), kc.Validate(), rdc.Validate()); err != nil {
		return err
	}
	env, err := setup(c, stderr, "renderer")
	if err != nil {
		return err
	}
	defer env.admin.Close()
	rdb, err := env.openRedis(ctx, rdc)
	if err != nil {
		return err
	}
	defer rdb.Close()
	// The identity may be settled only by renderer.New (a leased slot).
	kc.ClientID = "trawler-renderer-" + cmp.Or(rc.ID, rc.Crawl+"-"+rc.Stream)
	r, err := renderer.New(rc, renderer.Deps{Profile: env.profile, Kafka: kc, Redis: rdb, Logger: env.log,
		Registerer: env.reg, Version: version})
	if err != nil {
		return err
	}
	err = r.Run(ctx)
	env.log.Info("stopped", "err", err)
	return err
}
