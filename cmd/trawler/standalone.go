package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/profiles"
	"github.com/trawler-crawl/trawler/services/standalone"
)

// resolveProfile loads a profile by path, or by the name of a shipped
// profile ("demo", "frequent") when no such file exists.
func resolveProfile(name string) (profile.Profile, error) {
	if name == "" {
		return profile.Default(), nil
	}
	if _, err := os.Stat(name); err == nil {
		return profile.Load(name)
	}
	b, err := profiles.FS.ReadFile(filepath.Base(name) + ".yaml")
	if err != nil {
		return profile.Profile{}, fmt.Errorf("profile %q: no such file and no shipped profile of that name", name)
	}
	p := profile.Default()
	if err := profile.Decode(bytes.NewReader(b), &p); err != nil {
		return profile.Profile{}, fmt.Errorf("shipped profile %s: %w", name, err)
	}
	return p, nil
}

func runStandalone(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("standalone", stderr)
	var c common
	var sc standalone.Config
	fs.StringVar(&c.profilePath, "profile", "", "crawl profile: a YAML file or a shipped profile name (frequent, demo)")
	fs.StringVar(&c.logFormat, "log-format", "auto", "log format: json, text, or auto (text on a terminal)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
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
	log, err := newLogger(c.logFormat, c.logLevel, stderr)
	if err != nil {
		return err
	}
	p, err := resolveProfile(c.profilePath)
	if err != nil {
		return err
	}
	sum, err := standalone.Run(ctx, sc, standalone.Deps{Profile: p, Resolver: r, Logger: log, Registry: newRegistry(), Version: version})
	if sum != nil {
		sum.Print(stdout)
	}
	return err
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", stderr)
	var c common
	sc := standalone.Config{}
	sc.RegisterFlags(fs)
	fs.StringVar(&c.logFormat, "log-format", "auto", "log format: json, text, or auto (text on a terminal)")
	fs.StringVar(&c.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	var tw testweb.Config
	fs.Int64Var(&tw.Seed, "site-seed", 1, "synthetic web generator seed")
	fs.IntVar(&tw.Hosts, "hosts", 4, "synthetic web hosts")
	fs.IntVar(&tw.PagesPerHost, "pages", 60, "HTML pages per host")
	fs.IntVar(&tw.Port, "site-port", 8480, "port every synthetic host listens on (fixed, so a second run continues the same crawl)")
	if err := parse(fs, args); err != nil {
		return err
	}
	c.profilePath = "demo"
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
