package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/explain"
	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/services/standalone"
)

const ctlUsage = `usage: trawler ctl [--api URL] [--token-file FILE] [--standalone DIR] COMMAND [flags] [args]

Commands (they speak a worker's or standalone's admin API, /api/v1/):
  status                                       frontier counts, top hosts and targets, crawl limits
  explain URL [--via URL] [--hops LLE]         why a URL is (not) crawled, and its captures
  pause|resume|terminate [--target SOURCE | --host HOST | --stream S]
  seeds URL...                                 add seeds
  exclude add|remove SURT...                   add or remove excluded SURT prefixes
  sheets PREFIX NAME...                        attach sheets at a SURT prefix
  delete --surt PREFIX | --regex RE            drop matching URIs from the frontier
  ack ID                                       a command's acknowledgement
  harveststats [--source TAG [--launch TS]]    launches and their states, or one launch's statistics by domain

Control commands print the command's id and wait --wait (5s) for the
workers' acknowledgement; workers act on <crawl>.control. Terminate of a
--target or --host pauses it, ends its queued URIs -6000 (annotated
terminate) and lets those in flight finish; resume lifts the pause.`

// ctlOpts are the flags every ctl command takes.
type ctlOpts struct {
	api        string
	tokenFile  string
	standalone string
	json       bool
}

func (o *ctlOpts) register(fs *flag.FlagSet) {
	fs.StringVar(&o.api, "api", "", "admin API of a worker or standalone (its --admin-addr); default: the standalone's, else "+defaultAdminAPI)
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the admin token; default: the standalone's")
	fs.StringVar(&o.standalone, "standalone", "", "data directory of a running `trawler standalone`, whose standalone.json gives --api and --token-file; default: "+
		standalone.DefaultDataDir+" when a standalone runs there and neither --api nor --token-file is given")
	// The roles' name for the same file, so TRAWLER_ADMIN_TOKEN_FILE in an
	// operator's shell (or a pod) works without a flag.
	fs.StringVar(&o.tokenFile, "admin-token-file", "", "the same as --token-file")
}

// parseCtl applies the environment and the flags given before the command
// (globals), then the command's own args, in which flags and arguments may
// be interleaved (explain URL --hops L). It returns the arguments.
func parseCtl(fs *flag.FlagSet, globals, args []string) ([]string, error) {
	if err := parse(fs, globals); err != nil {
		return nil, err
	}
	var pos []string
	for {
		if err := parseArgs(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

func runCtl(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o ctlOpts
	fs := newFlagSet("ctl", stderr)
	o.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\n\nFlags (also accepted after COMMAND; every command takes --help):\n", ctlUsage)
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprintln(stderr, ctlUsage)
		return fmt.Errorf("%w: want a command", errUsage)
	}
	globals := args[:len(args)-len(rest)]
	name, rest := rest[0], rest[1:]
	if isHelp(name) {
		fmt.Fprintln(stdout, ctlUsage)
		return flag.ErrHelp
	}
	o = ctlOpts{}
	sfs := newFlagSet("ctl "+name, stderr)
	o.register(sfs)
	var pos []string
	var err error
	parseSub := func() error {
		pos, err = parseCtl(sfs, globals, rest)
		return err
	}
	switch name {
	case "status":
		sfs.BoolVar(&o.json, "json", false, "print the API's JSON")
		if err := parseSub(); err != nil {
			return err
		}
		return ctlStatus(ctx, o, stdout)
	case "harveststats":
		sfs.BoolVar(&o.json, "json", false, "print the API's JSON")
		source := sfs.String("source", "", "source tag of the launch (e.g. tid:57875:https://example.org/)")
		launch := sfs.String("launch", "", "14-digit launch timestamp (with --source)")
		if err := parseSub(); err != nil {
			return err
		}
		return ctlHarvestStats(ctx, o, stdout, *source, *launch)
	case "explain":
		sfs.BoolVar(&o.json, "json", false, "print the API's JSON")
		via := sfs.String("via", "", "the page the URL was found on")
		hops := sfs.String("hops", "", "the URL's hop path from its seed (empty with no --via: judged as a seed)")
		if err := parseSub(); err != nil {
			return err
		}
		if len(pos) != 1 {
			return usageErr(stderr, "explain takes one URL")
		}
		return ctlExplain(ctx, o, stdout, pos[0], *via, *hops)
	case "ack":
		if err := parseSub(); err != nil {
			return err
		}
		if len(pos) != 1 {
			return usageErr(stderr, "ack takes one command id")
		}
		return ctlAck(ctx, o, stdout, pos[0])
	case "pause", "resume", "terminate":
		source := sfs.String("target", "", "only this target (its source tag)")
		host := sfs.String("host", "", "only this host (host[:port] queue)")
		stream := sfs.String("stream", "", "only this stream (npld, bypm)")
		wait := sfs.Duration("wait", 5*time.Second, "how long to wait for the acknowledgement")
		if err := parseSub(); err != nil {
			return err
		}
		c := messages.Control{Command: name}
		set := 0
		for _, f := range []struct {
			v, scope string
			dst      *string
		}{{*source, messages.ScopeTarget, &c.Source}, {*host, messages.ScopeHost, &c.Host}, {*stream, messages.ScopeStream, &c.Stream}} {
			if f.v != "" {
				c.Scope, *f.dst = f.scope, f.v
				set++
			}
		}
		if set > 1 || len(pos) > 0 {
			return usageErr(stderr, "%s takes at most one of --target, --host, --stream, and no arguments", name)
		}
		return ctlSend(ctx, o, stdout, c, *wait)
	case "seeds":
		wait := sfs.Duration("wait", 5*time.Second, "how long to wait for the acknowledgement")
		if err := parseSub(); err != nil {
			return err
		}
		if len(pos) == 0 {
			return usageErr(stderr, "seeds takes one or more URLs")
		}
		return ctlSend(ctx, o, stdout, messages.Control{Command: messages.CommandSeeds, URLs: pos}, *wait)
	case "exclude":
		wait := sfs.Duration("wait", 5*time.Second, "how long to wait for the acknowledgement")
		if len(rest) > 0 && isHelp(rest[0]) {
			fmt.Fprintln(stderr, "usage: trawler ctl exclude add|remove SURT...")
			return parseSub()
		}
		op, more, err := sub(rest, messages.ActionAdd, messages.ActionRemove)
		if err != nil {
			return usageErr(stderr, "exclude takes add or remove, then SURT prefixes")
		}
		rest = more
		if err := parseSub(); err != nil {
			return err
		}
		if len(pos) == 0 {
			return usageErr(stderr, "exclude %s takes one or more SURT prefixes", op)
		}
		return ctlSend(ctx, o, stdout, messages.Control{Command: messages.CommandExclusions, Action: op, SURTs: pos}, *wait)
	case "sheets":
		wait := sfs.Duration("wait", 5*time.Second, "how long to wait for the acknowledgement")
		if err := parseSub(); err != nil {
			return err
		}
		if len(pos) < 2 {
			return usageErr(stderr, "sheets takes a SURT prefix and one or more sheet names")
		}
		return ctlSend(ctx, o, stdout, messages.Control{Command: messages.CommandSheets, SURTs: pos[:1], Sheets: pos[1:]}, *wait)
	case "delete":
		prefix := sfs.String("surt", "", "drop queued URIs under this SURT prefix")
		re := sfs.String("regex", "", "drop queued URIs matching this regular expression (RE2)")
		wait := sfs.Duration("wait", 5*time.Second, "how long to wait for the acknowledgement")
		if err := parseSub(); err != nil {
			return err
		}
		if (*prefix == "") == (*re == "") || len(pos) > 0 {
			return usageErr(stderr, "delete takes exactly one of --surt, --regex")
		}
		c := messages.Control{Command: messages.CommandDelete, Regex: *re}
		if *prefix != "" {
			c.SURTs = []string{*prefix}
		}
		return ctlSend(ctx, o, stdout, c, *wait)
	}
	fmt.Fprintln(stderr, ctlUsage)
	return usageErr(stderr, "unknown ctl command %q", name)
}

// usageErr tells the user what is wrong with the command line and returns
// errUsage (exit status 2).
func usageErr(stderr io.Writer, format string, a ...any) error {
	fmt.Fprintf(stderr, "trawler ctl: "+format+"\n", a...)
	return errUsage
}

// ctlToken reads the token from --token-file (or TRAWLER_ADMIN_TOKEN_FILE),
// or the standalone's (ctlTarget).
func ctlToken(path string) (string, error) {
	if path == "" {
		return "", errors.New("no admin token: give --token-file (or set TRAWLER_ADMIN_TOKEN_FILE), or --standalone DIR for a standalone's data directory")
	}
	return admin.LoadToken(path)
}

// errNotFound is a 404 from an endpoint where it is an answer.
type errNotFound struct{}

func (errNotFound) Error() string { return "not found" }

// ctlCall sends one API request and decodes a 2xx JSON answer into out; a
// non-2xx answer is an error carrying the API's reason.
func ctlCall(ctx context.Context, o ctlOpts, method, path string, body any, out any) ([]byte, error) {
	base, tokenFile, err := ctlTarget(o)
	if err != nil {
		return nil, err
	}
	tok, err := ctlToken(tokenFile)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(base, "/")+path, rd)
	if err != nil {
		return nil, fmt.Errorf("--api %q: %w", base, err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin API: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("admin API: read answer: %w", err)
	}
	if resp.StatusCode == http.StatusNotFound && method == http.MethodGet && strings.HasPrefix(path, "/api/v1/control/") {
		return nil, errNotFound{}
	}
	if resp.StatusCode/100 != 2 {
		var e api.Error
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("admin API: %s: %s", resp.Status, e.Error)
		}
		return nil, fmt.Errorf("admin API: %s: %s", resp.Status, bytes.TrimSpace(raw))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("admin API: decode answer: %w", err)
		}
	}
	return raw, nil
}

func ctlSend(ctx context.Context, o ctlOpts, stdout io.Writer, c messages.Control, wait time.Duration) error {
	c.By = "ctl"
	if u := os.Getenv("USER"); u != "" {
		c.By = "ctl:" + u
	}
	var acc api.ControlAccepted
	if _, err := ctlCall(ctx, o, http.MethodPost, "/api/v1/control", c, &acc); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sent %s to %s: id %s\n", acc.Command, acc.Topic, acc.ID)
	// Workers acknowledge in Redis once they have applied the command; a
	// crawl with no worker running never does, which is not an error.
	deadline := time.Now().Add(wait)
	for {
		a, err := ctlReadAck(ctx, o, acc.ID)
		if err != nil {
			return err
		}
		if a != nil {
			printAck(stdout, a)
			return nil
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(stdout, "not acknowledged within %s; check later with: trawler ctl ack %s\n", wait, acc.ID)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ctlReadAck returns the acknowledgement of id, nil while there is none.
func ctlReadAck(ctx context.Context, o ctlOpts, id string) (*api.Ack, error) {
	var a api.Ack
	_, err := ctlCall(ctx, o, http.MethodGet, "/api/v1/control/"+url.PathEscape(id), nil, &a)
	var nf errNotFound
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}

func ctlAck(ctx context.Context, o ctlOpts, stdout io.Writer, id string) error {
	a, err := ctlReadAck(ctx, o, id)
	if err != nil {
		return err
	}
	if a == nil {
		return fmt.Errorf("command %s: not acknowledged (not applied yet, unknown, or expired)", id)
	}
	printAck(stdout, a)
	return nil
}

func printAck(w io.Writer, a *api.Ack) {
	state := "applied"
	if a.Error != "" {
		state = "FAILED: " + a.Error
	}
	fmt.Fprintf(w, "acknowledged: %s %s by %s at %s: %s\n", a.Command, state, a.Worker, a.AppliedAt.Format(time.RFC3339), a.Result)
	for k, v := range a.Results {
		fmt.Fprintf(w, "  %s: %s\n", k, v)
	}
}

func ctlStatus(ctx context.Context, o ctlOpts, stdout io.Writer) error {
	var st api.Status
	raw, err := ctlCall(ctx, o, http.MethodGet, "/api/v1/status", nil, &st)
	if err != nil {
		return err
	}
	if o.json {
		_, err := stdout.Write(raw)
		return err
	}
	return printStatus(stdout, &st)
}

// printStatus writes a status as a table.
func printStatus(stdout io.Writer, st *api.Status) error {
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "crawl\t%s (frontier %s) at %s\n", st.Crawl, st.Frontier, st.At.Format(time.RFC3339))
	fmt.Fprintf(tw, "queued\t%d\nin flight\t%d\npaused\t%v\n", st.Queued, st.InFlight, st.Paused)
	if st.Held > 0 {
		fmt.Fprintf(tw, "held\t%d of the queued, their targets paused\n", st.Held)
	}
	h := st.Hosts
	fmt.Fprintf(tw, "hosts\t%d (ready %d, snoozed %d, busy %d, exhausted %d, paused %d, backing off %d)\n",
		h.Total, h.Ready, h.Snoozed, h.Busy, h.Exhausted, h.Paused, h.BackingOff)
	if st.Retry.URIs > 0 {
		fmt.Fprintf(tw, "retrying\t%d URIs at %d hosts\n", st.Retry.URIs, st.Retry.Hosts)
	}
	t := st.Totals
	fmt.Fprintf(tw, "finished\t%d URIs, %d downloaded, %d bytes, %d novel\n", t.URIs, t.Downloaded, t.Bytes, t.Novel)
	l := st.Limits
	fmt.Fprintf(tw, "limits\tdocuments %d, bytes %d, novel URLs %d, novel bytes %d, time %ds (0: none); elapsed %.0fs\n",
		l.MaxDocumentsDownload, l.MaxBytesDownload, l.MaxNovelUrls, l.MaxNovelBytes, l.MaxTimeSeconds, l.ElapsedSeconds)
	if l.Reached != "" {
		fmt.Fprintf(tw, "limit reached\t%s\n", l.Reached)
	}
	topLabel := "top hosts"
	switch {
	case st.TopHostsAt == nil && len(st.TopHosts) == 0 && st.Queued > 0:
		fmt.Fprintf(tw, "%s\tbeing read (a scan of every host)\n", topLabel)
	case st.TopHostsAt != nil && st.At.Sub(*st.TopHostsAt) >= time.Second:
		topLabel += fmt.Sprintf(" (%s before)", st.At.Sub(*st.TopHostsAt).Round(time.Second))
	}
	for i, hc := range st.TopHosts {
		label := ""
		if i == 0 {
			label = topLabel
		}
		fmt.Fprintf(tw, "%s\t%s %d\n", label, hc.Host, hc.Queued)
	}
	for i, tc := range st.Targets {
		label := ""
		if i == 0 {
			label = fmt.Sprintf("targets (%d)", st.TargetsTotal)
		}
		paused := ""
		if tc.Paused {
			paused = " (paused)"
		}
		fmt.Fprintf(tw, "%s\t%s %d queued, %d in flight%s\n", label, tc.Source, tc.Queued, tc.InFlight, paused)
	}
	return tw.Flush()
}

// ctlHarvestStats lists the launches with their states, or prints one
// launch's statistics as the provenance role's report does.
func ctlHarvestStats(ctx context.Context, o ctlOpts, stdout io.Writer, source, launch string) error {
	if source == "" {
		var rows []api.LaunchState
		raw, err := ctlCall(ctx, o, http.MethodGet, "/api/v1/harveststats", nil, &rows)
		if err != nil || o.json {
			if err == nil {
				_, err = stdout.Write(raw)
			}
			return err
		}
		for _, r := range rows {
			fmt.Fprintf(stdout, "%s %s %s\n", cmp.Or(r.Timestamp, "-"), r.State, r.Source)
		}
		return nil
	}
	q := url.Values{"source": {source}, "launch": {launch}}
	var st harveststats.LaunchStats
	raw, err := ctlCall(ctx, o, http.MethodGet, "/api/v1/harveststats?"+q.Encode(), nil, &st)
	if err != nil || o.json {
		if err == nil {
			_, err = stdout.Write(raw)
		}
		return err
	}
	_, err = stdout.Write(st.Text())
	return err
}

func ctlExplain(ctx context.Context, o ctlOpts, stdout io.Writer, rawURL, via, hops string) error {
	q := url.Values{"url": {rawURL}}
	if via != "" {
		q.Set("via", via)
	}
	if hops != "" {
		q.Set("hops", hops)
	}
	var rep explain.Report
	raw, err := ctlCall(ctx, o, http.MethodGet, "/api/v1/explain?"+q.Encode(), nil, &rep)
	if err != nil {
		return err
	}
	if o.json {
		_, err := stdout.Write(raw)
		return err
	}
	return rep.WriteText(stdout)
}
