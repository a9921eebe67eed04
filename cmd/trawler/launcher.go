package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/services/launcher"
)

func runLauncher(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	verb, rest, err := sub(args, "run", "serve")
	if err != nil {
		fmt.Fprintln(stderr, "usage: trawler launcher run --feed FILE|DIR|URL ... [flags]")
		return err
	}
	if verb == "serve" {
		return errors.New("launcher serve (the hourly scheduler) is not built yet; run 'trawler launcher run' from a CronJob")
	}
	fs := newFlagSet("launcher run", stderr)
	var c common
	var lc launcher.Config
	var kc kafka.Config
	c.register(fs, "127.0.0.1:0")
	lc.RegisterFlags(fs)
	kc.RegisterFlags(fs)
	at := fs.String("at", "", "run the decision for this time (RFC 3339) instead of now")
	if err := parse(fs, rest); err != nil {
		return err
	}
	when := time.Now()
	if *at != "" {
		if when, err = time.Parse(time.RFC3339, *at); err != nil {
			return fmt.Errorf("--at: %w", err)
		}
	}
	if err := errorsJoin(lc.Validate(), kc.Validate()); err != nil {
		return err
	}
	log, err := newLogger(c.logFormat, c.logLevel, stderr)
	if err != nil {
		return err
	}
	deps := launcher.Deps{Logger: log, Out: stdout}
	if !lc.DryRun {
		kc.ClientID = "trawler-launcher"
		cl, err := kafka.NewClient(kc)
		if err != nil {
			return err
		}
		defer cl.Close()
		deps.Producer = kgoProducer{cl}
		deps.KeyFunc = hostkey.ForURL
	}
	svc, err := launcher.New(lc, deps)
	if err != nil {
		return err
	}
	sum, err := svc.RunOnce(ctx, when)
	fmt.Fprintf(stderr, "launcher: %d targets read, %d launched (%d messages), skipped %v, %d bad lines\n",
		sum.Targets, sum.Launched, sum.Messages, sum.Skipped, sum.BadLines)
	for _, e := range sum.Errors {
		fmt.Fprintf(stderr, "  %v\n", e)
	}
	return err
}

type kgoProducer struct{ cl *kgo.Client }

func (p kgoProducer) Produce(ctx context.Context, topic, key string, value []byte) error {
	return p.cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(key), Value: value}).FirstErr()
}

