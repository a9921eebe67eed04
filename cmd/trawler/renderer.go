package main

import (
	"cmp"
	"context"
	"io"

	"github.com/trawler-crawl/trawler/services/renderer"
)

func runRenderer(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlagSet("renderer", stderr)
	var sf serviceFlags
	var rc renderer.Config
	sf.register(fs)
	rc.RegisterFlags(fs)
	env, rdb, stop, err := sf.start(ctx, fs, args, stderr, "renderer", func() error { return rc.Validate() })
	if err != nil {
		return err
	}
	defer stop()
	kc := sf.kc
	// The identity may be settled only by renderer.New (a leased slot).
	kc.ClientID = "trawler-renderer-" + cmp.Or(rc.ID, rc.Crawl+"-"+rc.Stream)
	r, err := renderer.New(rc, renderer.Deps{Profile: env.profile, Kafka: kc, Redis: rdb, Logger: env.log,
		Registerer: env.reg, Version: buildVersion()})
	if err != nil {
		return err
	}
	err = r.Run(ctx)
	env.log.Info("stopped", "err", err)
	return err
}
