package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/sheets"
	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/uri"
	"github.com/trawler-crawl/trawler/profiles"
)

const profileUsage = "usage: trawler profile check FILE|NAME [--url URL]... [--redis ADDR --frontier NAME] (FILE a profile, NAME a shipped profile such as frequent)"

// runProfile is `trawler profile check`: the operator's tool for "is this
// profile right?" and "why was this URL (not) crawled?". It validates a
// profile (exit 1 with each offending key and its line) and, for each
// --url, prints the sheets that apply in order with the prefix that
// matched, the settings that differ from the profile, and the scope
// decision.
func runProfile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	_, rest, err := sub(args, verbs()["profile"]...)
	if err != nil {
		fmt.Fprintln(stderr, profileUsage)
		return err
	}
	fs := newFlagSet("profile check", stderr)
	var urls repeated
	fs.Var(&urls, "url", "explain the effective settings for this URL (repeatable)")
	var seeds repeated
	fs.Var(&seeds, "seed", "with --url: a seed of the crawl, for the seed-prefix scope rules (repeatable)")
	hops := fs.String("hops", "", "with --url: the URL's hop path from its seed (e.g. LLE)")
	via := fs.String("via", "", "with --url: the URL it was discovered on")
	var rc redisconn.Config
	fs.StringVar(&rc.Addr, "redis", "", "also apply the sheets launch messages attached, read from this Redis (host:port); empty: the profile's only")
	fs.StringVar(&rc.Password, "redis-password", "", "Redis password")
	frontierName := fs.String("frontier", "fc-npld", "with --redis: the frontier whose launch-attached sheets to read (the worker's crawl-stream name: fc-npld, fc-bypm, dc)")
	// The file may come before or after the flags.
	var file string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		file, rest = rest[0], rest[1:]
	}
	if err := parse(fs, rest); err != nil {
		return err
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, profileUsage)
		return fmt.Errorf("%w: want exactly one profile", errUsage)
	}
	src, data, err := readProfile(file)
	if err != nil {
		return err
	}
	p := profile.Default()
	if err := profile.Decode(bytes.NewReader(data), &p); err != nil {
		return fmt.Errorf("profile %s is invalid:\n%s", src, withLines(err, data))
	}
	opts := sheets.Options{}
	if rc.Addr != "" {
		rdb, err := redisconn.Open(ctx, rc)
		if err != nil {
			return err
		}
		defer rdb.Close()
		// Launch-attached sheets live under the frontier's first shard's
		// prefix, which depends on frontier.shards.
		f, err := frontier.New(rdb, *frontierName, frontier.OptionsFrom(p))
		if err != nil {
			return err
		}
		opts.Redis, opts.KeyPrefix = rdb, f.Prefix()
	}
	sh, err := sheets.New(ctx, p, opts)
	if err != nil {
		return fmt.Errorf("profile %s is invalid:\n  %v", src, err)
	}
	printSummary(stdout, src, p, sh)
	if len(urls) == 0 {
		return nil
	}
	eng, err := scopeEngine(ctx, p, file, opts, seeds)
	if err != nil {
		fmt.Fprintf(stdout, "scope engine not built: %v\n", err)
	}
	if eng != nil {
		defer eng.Close()
	}
	for _, u := range urls {
		if err := explainURL(ctx, stdout, sh, eng, u, *via, *hops); err != nil {
			return err
		}
	}
	return nil
}

// scopeEngine builds the profile's scope with the given seeds, plus the
// seeds launched into the frontier when Redis is given.
func scopeEngine(ctx context.Context, p profile.Profile, file string, opts sheets.Options, seeds []string) (*scope.Engine, error) {
	set := scope.NewSeeds(opts.Redis, opts.KeyPrefix)
	if err := set.Refresh(ctx); err != nil {
		return nil, err
	}
	for _, s := range seeds {
		if err := set.Add(ctx, s, scope.SeedScopeRoot); err != nil {
			return nil, fmt.Errorf("--seed %q: %w", s, err)
		}
	}
	base := ""
	if _, err := os.Stat(file); err == nil {
		base = filepath.Dir(file)
	}
	return scope.New(p.Scope, scope.Options{Seeds: set, BaseDir: base})
}

// repeated collects a repeatable string flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// readProfile reads a profile file, or a shipped profile by name when no
// such file exists (as --profile does).
func readProfile(name string) (string, []byte, error) {
	b, err := os.ReadFile(name)
	if err == nil {
		return name, b, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", nil, fmt.Errorf("read profile: %w", err)
	}
	b, ferr := profiles.FS.ReadFile(filepath.Base(name) + ".yaml")
	if ferr != nil || strings.ContainsAny(name, `/\`) {
		return "", nil, fmt.Errorf("profile %q: no such file and no shipped profile of that name", name)
	}
	return "shipped profile " + name, b, nil
}

// errKey finds the dotted key an error line starts with ("frontier.seenFilter:
// ..." or "politeness: ...").
var errKey = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)*): `)

// withLines puts each error on its own line and, where the error names a key
// but not a line, adds the line of that key in the file.
func withLines(err error, data []byte) string {
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root)
	var out []string
	for _, msg := range strings.Split(err.Error(), "\n") {
		msg = strings.TrimSpace(msg)
		if msg == "" || msg == "yaml: unmarshal errors:" {
			continue
		}
		if m := errKey.FindStringSubmatch(msg); m != nil && !strings.Contains(msg, "line ") {
			if line := keyLine(&root, m[1]); line > 0 {
				msg = fmt.Sprintf("line %d: %s", line, msg)
			}
		}
		out = append(out, "  "+msg)
	}
	return strings.Join(out, "\n")
}

// keyLine returns the line of a dotted key in a YAML document, or of its
// deepest section that is present, or 0.
func keyLine(root *yaml.Node, dotted string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, part := range strings.Split(dotted, ".") {
		if n.Kind != yaml.MappingNode {
			break
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				line, next = n.Content[i].Line, n.Content[i+1]
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return line
}

func printSummary(w io.Writer, src string, p profile.Profile, sh *sheets.Sheets) {
	prefixes := 0
	for _, a := range p.Sheets.Associations() {
		prefixes += len(a.SurtPrefixes)
	}
	fmt.Fprintf(w, "profile %s: OK\n", src)
	fmt.Fprintf(w, "  crawl %s; %d scope rules; %d sheets (sets %v, %d defined here); %d associations over %d SURT prefixes\n",
		p.Crawl.Name, p.Scope.Rules.Len(), len(sh.Names()), p.Sheets.Include(), len(p.Sheets.Definitions()),
		len(p.Sheets.Associations()), prefixes)
}

// explainURL prints the effective settings of one URL.
func explainURL(ctx context.Context, w io.Writer, sh *sheets.Sheets, eng *scope.Engine, rawURL, via, hops string) error {
	if !strings.HasPrefix(rawURL, "http://") && !strings.HasPrefix(rawURL, "https://") {
		return fmt.Errorf("--url %q: want an http or https URL", rawURL)
	}
	s := surt.Heritrix(rawURL)
	eff := sh.For(s)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nurl\t%s\nsurt\t%s\n", rawURL, s)
	applied := sh.Explain(s)
	if len(applied) == 0 {
		fmt.Fprintln(tw, "sheets\tnone apply")
	} else {
		fmt.Fprintln(tw, "sheets\t(in the order applied; the last wins)")
	}
	for i, a := range applied {
		state := "applied"
		if a.Skipped != "" {
			state = "SKIPPED: " + a.Skipped
		}
		// One cell per line: long prefixes must not widen the columns.
		fmt.Fprintf(tw, "  %d. %s at %s (%s): %s\n", i+1, a.Sheet, a.Prefix, a.Origin, state)
		for _, ig := range a.Ignored {
			fmt.Fprintf(tw, "       no effect: %s\n", ig)
		}
	}
	diffs := settingDiffs(sh.Base().Profile, eff.Profile)
	if len(diffs) == 0 {
		fmt.Fprintln(tw, "settings\tas in the profile")
	} else {
		fmt.Fprintln(tw, "settings\tthat differ from the profile:")
	}
	for _, d := range diffs {
		fmt.Fprintf(tw, "  %s\t%s -> %s\n", d.key, d.from, d.to)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return explainScope(ctx, w, eff, eng, rawURL, via, hops)
}

// explainScope prints the scope decision and each rule's answer under the
// URL's effective thresholds.
func explainScope(ctx context.Context, w io.Writer, eff *sheets.Effective, eng *scope.Engine, rawURL, via, hops string) error {
	if eng == nil {
		_, err := fmt.Fprintln(w, "scope     not evaluated (no engine)")
		return err
	}
	var c *scope.Candidate
	norm, err := uri.Normalize(rawURL)
	if err == nil {
		var c0 *scope.Candidate
		c0, err = scope.NewCandidate(norm)
		c = c0
	}
	if err != nil {
		return fmt.Errorf("--url %q: %w", rawURL, err)
	}
	params := scope.ParamsFrom(eff.Profile.Scope)
	c.Via, c.HopPath, c.IsSeed, c.Params = via, hops, hops == "" && via == "", &params
	d, steps := eng.Explain(ctx, c)
	fmt.Fprintf(w, "scope     %s (hops %q, via %q)\n", d, hops, via)
	for _, st := range steps {
		state := st.Result.String()
		if st.Skipped {
			state = "skipped"
		}
		fmt.Fprintf(w, "  #%d %s %s: %s\n", st.Number, st.Rule, st.Decision, state)
	}
	if len(d.Annotations) > 0 {
		fmt.Fprintf(w, "  annotations %s\n", strings.Join(d.Annotations, ","))
	}
	return nil
}

type diff struct{ key, from, to string }

// settingDiffs lists the dotted settings whose values differ, sorted.
func settingDiffs(a, b profile.Profile) []diff {
	fa, fb := flatten(a), flatten(b)
	var out []diff
	for k, vb := range fb {
		if va := fa[k]; va != vb {
			out = append(out, diff{k, va, vb})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// flatten renders a profile (without its sheets section) as dotted key ->
// value, through its YAML form so the keys are the profile's own.
func flatten(p profile.Profile) map[string]string {
	p.Sheets = profile.Sheets{}
	var doc map[string]any
	_ = yaml.Unmarshal([]byte(p.YAML()), &doc)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				walk(strings.TrimPrefix(prefix+"."+k, "."), x)
			}
			return
		}
		out[prefix] = fmt.Sprint(v)
	}
	walk("", doc)
	delete(out, "sheets")
	return out
}
