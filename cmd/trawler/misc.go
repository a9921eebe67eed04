package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	kafkatopics "github.com/trawler-crawl/trawler/kafka-topics"
	"github.com/trawler-crawl/trawler/pkg/kafka"
)

// sub splits "<verb> [flags]" for commands with verbs. Asking a group
// for --help is not a mistake, so it is flag.ErrHelp (exit 0) once the
// caller has printed its usage; a missing verb is a usage error (exit 2).
func sub(args []string, want ...string) (string, []string, error) {
	if len(args) == 0 {
		return "", nil, fmt.Errorf("%w: want one of %v", errUsage, want)
	}
	if isHelp(args[0]) {
		return "", nil, flag.ErrHelp
	}
	for _, v := range want {
		if args[0] == v {
			return v, args[1:], nil
		}
	}
	return "", nil, fmt.Errorf("unknown verb %q: want one of %v", args[0], want)
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

func runTopics(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if _, rest, err := sub(args, verbs()["topics"]...); err != nil {
		fmt.Fprintln(stderr, "usage: trawler topics apply [--kafka BROKERS] [--file FILE] [--partitions N]")
		return err
	} else {
		args = rest
	}
	fs := newFlagSet("topics apply", stderr)
	var kc kafka.Config
	kc.RegisterFlags(fs)
	file := fs.String("file", "", "topic definitions YAML (default: the kafka-topics/topics.yaml built in)")
	parts := fs.Int("partitions", 0, "override every topic's partition count (0 = as declared)")
	if err := parse(fs, args); err != nil {
		return err
	}
	data := kafkatopics.Default()
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			return fmt.Errorf("read topics: %w", err)
		}
		data = b
	}
	specs, err := kafka.ParseTopics(data)
	if err != nil {
		return err
	}
	kc.ClientID = "trawler-topics"
	cl, err := kafka.NewClient(kc)
	if err != nil {
		return err
	}
	defer cl.Close()
	rep, err := kafka.ApplyTopics(ctx, kadm.NewClient(cl), specs, int32(*parts))
	fmt.Fprintf(stdout, "%+v\n", rep)
	return err
}

func runConfig(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if _, rest, err := sub(args, verbs()["config"]...); err != nil {
		fmt.Fprintln(stderr, "usage: trawler config show [--profile FILE|NAME]")
		return err
	} else {
		args = rest
	}
	fs := newFlagSet("config show", stderr)
	var c common
	c.registerBase(fs, "info")
	if err := parse(fs, args); err != nil {
		return err
	}
	p, err := loadProfile(c)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# Precedence: %s\n", precedence)
	fmt.Fprintf(stdout, "# Environment: every flag of every command has a TRAWLER_* variable (--admin-addr: TRAWLER_ADMIN_ADDR).\n")
	printEnv(stdout)
	for _, kv := range c.sets {
		fmt.Fprintf(stdout, "# --set %s\n", kv)
	}
	fmt.Fprintf(stdout, "# Effective crawl profile (%s, then --set overrides):\n%s", profileSource(c.profilePath), p.YAML())
	return nil
}

func profileSource(p string) string {
	if p == "" {
		return "built-in defaults"
	}
	return p
}

// printEnv lists the TRAWLER_* variables set, redacting secrets.
func printEnv(w io.Writer) {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TRAWLER_") {
			name, val, _ := strings.Cut(kv, "=")
			if isSecret(name) {
				val = "<redacted>"
			}
			fmt.Fprintf(w, "# set: %s=%s\n", name, val)
		}
	}
}

func isSecret(name string) bool {
	for _, w := range []string{"PASSWORD", "TOKEN", "SECRET", "KEY"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
