package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/trawler-crawl/trawler/internal/editdist"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/profiles"
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
	sets        settingList
	logFormat   string
	logLevel    string
	adminAddr   string
}

// settingList collects --set key=value overrides in order; later ones win.
type settingList []string

func (s *settingList) String() string { return strings.Join(*s, ",") }
func (s *settingList) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("%q: want key=value, e.g. politeness.minDelayMs=1000", kv)
		}
		*s = append(*s, kv)
	}
	return nil
}

// registerBase registers the profile and logging flags.
func (c *common) registerBase(fs *flag.FlagSet, logLevel string) {
	fs.StringVar(&c.profilePath, "profile", "", "crawl profile: a YAML file or a shipped profile name (frequent, demo)")
	fs.Var(&c.sets, "set", "override one profile setting, key=value (repeatable), e.g. politeness.minDelayMs=1000")
	fs.StringVar(&c.logFormat, "log-format", "auto", "log format: json, text, or auto (text on a terminal)")
	fs.StringVar(&c.logLevel, "log-level", logLevel, "log level: debug, info, warn, error")
}

func (c *common) register(fs *flag.FlagSet, adminDefault string) {
	c.registerBase(fs, "info")
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
	warnUnknownEnv(fs.Output(), fs, os.Environ())
	return parseArgs(fs, args)
}

// parseArgs parses args with fs. Asked for help, it prints the usage and
// returns flag.ErrHelp. On a bad flag it prints the error last, where it
// is seen, with the nearest real flag for an unknown one and a pointer to
// --help instead of the whole usage, and returns an errUsage error.
func parseArgs(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		_, _ = out.Write(buf.Bytes())
		return err
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = fmt.Sprintf("unknown flag --%s", name)
		if near := nearestFlag(fs, name); near != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", near)
		}
	}
	fmt.Fprintf(out, "trawler %s: %s\nRun 'trawler %s --help' for its flags.\n", fs.Name(), msg, fs.Name())
	return fmt.Errorf("%w: %v", errUsage, err)
}

// nearestFlag returns the flag of fs whose name is nearest name, if it is
// near enough to be a typo (at most a third of its letters differ).
func nearestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", -1
	fs.VisitAll(func(f *flag.Flag) {
		d := editdist.Distance(name, f.Name)
		if bestD < 0 || d < bestD || (d == bestD && f.Name < best) {
			best, bestD = f.Name, d
		}
	})
	if bestD < 0 || bestD*3 > max(len(name), len(best)) {
		return ""
	}
	return best
}

// warnUnknownEnv warns about each TRAWLER_* variable in environ that sets
// no flag of fs, naming the nearest real one. A misspelt variable is
// otherwise silently ignored, and some typos change what the crawl does:
// TRAWLER_CLAMD_ADR would leave virus scanning off without a word.
// It is a warning, not an error, because one environment is often shared
// by several commands (a compose anchor, a Helm helper).
func warnUnknownEnv(w io.Writer, fs *flag.FlagSet, environ []string) {
	known := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { known[envName(f.Name)] = true })
	var unknown []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "TRAWLER_") && !known[name] && !imageEnv(name) {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		if near := nearestEnv(name, known); near != "" {
			fmt.Fprintf(w, "trawler %s: warning: %s is not a setting of this command (ignored); did you mean %s?\n", fs.Name(), name, near)
		} else {
			fmt.Fprintf(w, "trawler %s: warning: %s is not a setting of this command (ignored)\n", fs.Name(), name)
		}
	}
}

// imageEnv reports whether name is one of the variables the Dockerfile
// sets for every command of the image; a command without that flag (cdx,
// topics, launcher) ignores it without a warning, or every run in a
// container would warn.
func imageEnv(name string) bool {
	switch name {
	case "TRAWLER_ADMIN_ADDR", "TRAWLER_DATA", "TRAWLER_LOG_FORMAT":
		return true
	}
	return false
}

// nearestEnv returns the name in known closest to name by edit distance,
// ties broken alphabetically so the warning is stable; "" if known is empty.
func nearestEnv(name string, known map[string]bool) string {
	best, bestD := "", -1
	for k := range known {
		d := editdist.Distance(name, k)
		if bestD < 0 || d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	return best
}

// loadProfile reads the profile named by --profile (a file, or the name
// of a shipped profile), then applies the --set overrides in order.
func loadProfile(c common) (profile.Profile, error) {
	p, err := resolveProfile(c.profilePath)
	if err != nil {
		return p, err
	}
	for _, kv := range c.sets {
		k, v, _ := strings.Cut(kv, "=")
		if err := p.Set(k, v); err != nil {
			return p, fmt.Errorf("--set: %w", err)
		}
	}
	return p, nil
}

// resolveProfile loads a profile by path, or by the name of a shipped
// profile ("demo", "frequent") when no such file exists.
func resolveProfile(name string) (profile.Profile, error) {
	if name == "" {
		return profile.Default(), nil
	}
	if _, err := os.Stat(name); err == nil {
		return profile.Load(name)
	}
	if _, err := profiles.FS.ReadFile(filepath.Base(name) + ".yaml"); err != nil {
		return profile.Profile{}, fmt.Errorf("profile %q: no such file and no shipped profile of that name", name)
	}
	return profile.Shipped(filepath.Base(name))
}
