package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

// precedence is printed by `trawler config show` and in --help.
const precedence = "built-in defaults < profile file (--profile) < TRAWLER_* environment < command-line flags"

// envName is the environment variable that sets a flag.
func envName(flagName string) string {
	return "TRAWLER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// common are the settings every role shares.
type common struct {
	profilePath string
	logFormat   string
	logLevel    string
	adminAddr   string
}

func (c *common) register(fs *flag.FlagSet, adminDefault string) {
	fs.StringVar(&c.profilePath, "profile", "", "crawl profile YAML (see profiles/)")
	fs.StringVar(&c.logFormat, "log-format", "auto", "log format: json, text, or auto (text on a terminal)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.adminAddr, "admin-addr", adminDefault, "admin listener: /metrics, /healthz, /readyz")
}

// parse applies environment variables, then the command line, to fs.
// Environment values that do not parse are errors naming the variable.
func parse(fs *flag.FlagSet, args []string) error {
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: trawler %s [flags]\n\nSettings: %s.\nEvery flag can be set by its TRAWLER_* variable (e.g. --admin-addr is TRAWLER_ADMIN_ADDR).\n\nFlags:\n", fs.Name(), precedence)
		fs.PrintDefaults()
	}
	var errs []string
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Sprintf("%s=%q: %v", envName(f.Name), v, err))
			}
		}
	})
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("environment: %s", strings.Join(errs, "; "))
	}
	return fs.Parse(args)
}

// loadProfile reads the profile named by --profile (or TRAWLER_PROFILE),
// or returns the defaults.
func loadProfile(path string) (profile.Profile, error) {
	if path == "" {
		return profile.Default(), nil
	}
	return profile.Load(path)
}

func newLogger(format, level string, w io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "auto" {
		format = "json"
		if isTerminal(w) {
			format = "text"
		}
	}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want json, text or auto", format)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
