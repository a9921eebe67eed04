// Command trawler is the one binary of the Trawler crawl cluster. Each
// subcommand starts one role (launcher, worker, cdxwriter, renderer) or the
// single-machine modes (standalone, demo); this package only parses flags
// and wires services together.
package main

import (
	_ "time/tzdata" // feeds name IANA zones; images may lack /usr/share/zoneinfo

	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/trawler-crawl/trawler/services/standalone"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"launcher":   {"read crawl feeds and send launch messages (run: one shot)", runLauncher},
		"worker":     {"crawl: consume launches, fetch, write WARCs, publish crawled events", runWorker},
		"cdxwriter":  {"index crawled events into CDX", runCDXWriter},
		"cdx":        {"offline CDX tools (index: WARCs to CDX; load: into the index)", runCDX},
		"frontier":   {"frontier tools (rebuild: restore Redis from the Kafka journal)", runFrontier},
		"profile":    {"check a crawl profile (check FILE [--url URL])", runProfile},
		"renderer":   {"render handed-off pages in headless Chromium behind a recording proxy", runRenderer},
		"provenance": {"harvest statistics, metadata WARCs per launch, documents on watched targets (stats: query)", runProvenance},
		"standalone": {"run a whole crawl in one process with an embedded broker and Redis", runStandalone},
		"demo":       {"crawl a bundled synthetic web on loopback, no network needed", runDemo},
		"bench":      {"measure a standalone crawl against a bare fetch baseline on loopback", runBench},
		"topics":     {"manage Kafka topics (apply: create or update from kafka-topics/)", runTopics},
		"config":     {"show the effective configuration (show)", runConfig},
		"ctl":        {"operate a running crawl through the admin API (status, explain, pause, seeds ...)", runCtl},
		"qa":         {"replay a crawl's pages from the archive in Chromium, score them, report what is missing (--patch: crawl it)", runQA},
		"reports":    {"write Heritrix's six reports from the crawled topic (a crawl, stream, launch or target)", runReports},
		"state":      {"back up and restore a crawl's state (backup, restore, rebuild-recent)", runState},
		"version":    {"print the version", runVersion},
	}
}

// verbs lists the verbs of each command that has them (a command group),
// so the groups' dispatch and the tests that run every verb's --help
// share one list.
func verbs() map[string][]string {
	return map[string][]string{
		"cdx":      {"index", "load"},
		"frontier": {"rebuild", "stats", "host", "pause", "resume", "serve"},
		"launcher": {"run", "serve", "bulk", "export"},
		"profile":  {"check"},
		"topics":   {"apply"},
		"config":   {"show"},
		"state":    {"backup", "restore", "rebuild-recent"},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "trawler %s: a streaming crawl cluster for web archives\n\nUsage: trawler <command> [flags]\n\nCommands:\n", buildVersion())
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(w, "\nRun 'trawler <command> --help' for its flags. Settings: %s.\n", precedence)
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args[0] = "version"
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		usage(stderr)
		fmt.Fprintf(stderr, "\ntrawler: unknown command %q\n", args[0])
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := cmd.run(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.As(err, new(nothingArchivedError)), errors.Is(err, standalone.ErrFeedRejected):
		fmt.Fprintf(stderr, "trawler %s: %v\n", args[0], err)
		return exitNothingArchived
	default:
		fmt.Fprintf(stderr, "trawler %s: %v\n", args[0], err)
		return 1
	}
}

// errUsage marks errors already explained to the user with usage text.
var errUsage = errors.New("usage")

// runVersion prints the version; `trawler --version` is the same.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	v, committed := resolveVersion(version, readBuildInfo())
	if committed != "" {
		fmt.Fprintf(stdout, "trawler %s (commit of %s)\n", v, committed)
		return nil
	}
	fmt.Fprintf(stdout, "trawler %s\n", v)
	return nil
}
