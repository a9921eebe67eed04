package main

import (
	"context"
	"fmt"
	"io"

	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/services/standalone"
)

func runStandalone(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("standalone", stderr)
	var c common
	var sc standalone.Config
	c.registerBase(fs, "info")
	sc.RegisterFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(sc.Seeds) == 0 && len(sc.Feeds) == 0 {
		fmt.Fprintln(stderr, "trawler standalone: give at least one --seed or --feed")
		fs.Usage()
		return errUsage
	}
	return standaloneRun(ctx, c, sc, nil, stdout, stderr)
}

func standaloneRun(ctx context.Context, c common, sc standalone.Config, r fetch.Resolver, stdout, stderr io.Writer) error {
	tuneGC()
	log, err := newLogger(c.logFormat, c.logLevel, stderr)
	if err != nil {
		return err
	}
	p, err := loadProfile(c)
	if err != nil {
		return err
	}
	sum, err := standalone.Run(ctx, sc, standalone.Deps{Profile: p, Resolver: r, Logger: log, Registry: newRegistry(), Version: buildVersion(), Out: stdout})
	if sum != nil {
		sum.Print(stdout)
	}
	if err == nil && sum != nil {
		if why := sum.NothingArchived(); why != "" {
			return nothingArchivedError(why)
		}
	}
	return err
}

// nothingArchivedError ends a standalone run that archived nothing because
// every seed or feed line it was given was refused or rejected, with the
// reason: the command exits with exitNothingArchived, so a script sees the
// crawl did nothing.
type nothingArchivedError string

func (e nothingArchivedError) Error() string { return string(e) }

// exitNothingArchived is the exit status of errNothingArchived (1 is any
// other error, 2 a usage error).
const exitNothingArchived = 3

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", stderr)
	var c common
	sc := standalone.Config{}
	sc.RegisterFlags(fs)
	c.registerBase(fs, "warn")
	var tw testweb.Config
	fs.Int64Var(&tw.Seed, "site-seed", 1, "synthetic web generator seed")
	fs.IntVar(&tw.Hosts, "hosts", 4, "synthetic web hosts")
	fs.IntVar(&tw.PagesPerHost, "pages", 60, "HTML pages per host")
	fs.IntVar(&tw.Port, "site-port", 8480, "port every synthetic host listens on (fixed, so a second run continues the same crawl)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if c.profilePath == "" {
		c.profilePath = "demo"
	}
	site, err := testweb.Generate(tw)
	if err != nil {
		return err
	}
	srv, err := site.Start(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	sc.Seeds = append(sc.Seeds, srv.Seeds()...)
	sc.UntilIdle = true
	fmt.Fprintf(stdout, "Crawling the synthetic web (%d hosts, seeds %v) into %s\n", tw.Hosts, srv.Seeds(), sc.DataDir)
	return standaloneRun(ctx, c, sc, srv.Resolver(), stdout, stderr)
}
