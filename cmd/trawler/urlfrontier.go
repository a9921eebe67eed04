package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/pkg/urlfrontier"
)

const frontierServeHelp = `trawler frontier serve answers the URLFrontier API v2 (gRPC, crawler-commons
url-frontier) over Trawler's frontier in Redis, so that an outside crawler
(StormCrawler, the url-frontier client) puts discovered URLs and leases due
ones. Crawl id DEFAULT is frontier --frontier, crawl id X frontier
--frontier+X. Every call needs metadata "authorization: Bearer <admin token>"
(--admin-token-file), unless --insecure on a loopback --listen.
docs/frontier.md ("URLFrontier") lists what is mapped and what is refused.`

// frontierServeFlags are frontier serve's flags.
type frontierServeFlags struct {
	c         common
	rc        redisconn.Config
	listen    string
	tokenFile string
	insecure  bool
	name      string
}

func (o *frontierServeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.listen, "listen", "127.0.0.1:7071", "gRPC listen address (7071 is URLFrontier's usual port)")
	fs.StringVar(&o.tokenFile, "admin-token-file", "", "file holding the admin token every call must carry (authorization: Bearer <token>)")
	fs.BoolVar(&o.insecure, "insecure", false, "serve without a token; refused unless --listen is a loopback address")
	fs.StringVar(&o.name, "frontier", "urlfrontier", "base frontier name: the default crawl's frontier (a worker's frontier, e.g. fc-npld, is shared with its workers)")
}

// validate checks the security choice: a token, or insecure on loopback.
func (o *frontierServeFlags) validate() error {
	switch {
	case o.tokenFile != "" && o.insecure:
		return fmt.Errorf("%w: --admin-token-file and --insecure exclude each other", errUsage)
	case o.tokenFile == "" && !o.insecure:
		return fmt.Errorf("%w: frontier serve needs --admin-token-file (or --insecure on a loopback --listen)", errUsage)
	case o.insecure && !loopback(o.listen):
		return fmt.Errorf("%w: --insecure serves without a token, so only on a loopback --listen (not %s)", errUsage, o.listen)
	}
	return nil
}

// loopback reports whether addr (host:port) listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func runFrontierServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("frontier serve", stderr)
	var o frontierServeFlags
	o.c.register(fs, "")
	o.rc.RegisterFlags(fs)
	o.register(fs)
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprintln(stderr, frontierServeHelp)
		fmt.Fprintln(stderr)
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := errors.Join(o.validate(), o.rc.Validate()); err != nil {
		// A usage error is not printed by main: say it here.
		fmt.Fprintf(stderr, "trawler frontier serve: %v\n", err)
		return err
	}
	var lv slog.LevelVar
	log, err := newLoggerVar(o.c.logFormat, o.c.logLevel, &lv, stderr)
	if err != nil {
		return err
	}
	token, err := admin.LoadToken(o.tokenFile)
	if err != nil {
		return err
	}
	p, err := loadProfile(o.c)
	if err != nil {
		return err
	}
	reg := newRegistry()
	metricsAt := ""
	if o.c.adminAddr != "" {
		adm, err := admin.Listen(o.c.adminAddr, reg, log)
		if err != nil {
			return err
		}
		defer func() { _ = adm.Close() }()
		metricsAt = fmt.Sprintf(" (metrics on http://%s/metrics)", adm.Addr())
	}
	rdb, err := redisconn.OpenUniversal(ctx, o.rc)
	if err != nil {
		return err
	}
	defer func() { _ = rdb.Close() }()
	srv, err := urlfrontier.New(rdb, urlfrontier.Config{
		Frontier: o.name, Options: frontier.OptionsFrom(p), Policy: frontier.PolicyOf(p),
		Token: token, Insecure: o.insecure, Node: o.listen, Logger: log, Level: &lv, Registerer: reg,
	})
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("frontier serve: %w", err)
	}
	fmt.Fprintf(stdout, "URLFrontier API serving frontier %s on %s%s\n", o.name, lis.Addr(), metricsAt)
	log.Info("urlfrontier serving", "addr", lis.Addr().String(), "frontier", o.name, "token", token != "")
	return srv.Serve(ctx, lis)
}
