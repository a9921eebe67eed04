package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/pkg/testweb/docsite"
)

// SiteSpec says what the site process serves. It travels as JSON from the
// benchmark to the process it starts.
type SiteSpec struct {
	// Kind is SiteSynthetic, SiteDocs or SiteDir.
	Kind string `json:"kind"`
	// Hosts, PagesPerHost and PageBytes size the synthetic web.
	Hosts        int `json:"hosts,omitempty"`
	PagesPerHost int `json:"pagesPerHost,omitempty"`
	PageBytes    int `json:"pageBytes,omitempty"`
	// DocsPages and DocsFanout size the generated documentation site.
	DocsPages  int `json:"docsPages,omitempty"`
	DocsFanout int `json:"docsFanout,omitempty"`
	// Dir is the directory served (SiteDir) or the one the documentation
	// site is generated in (SiteDocs).
	Dir string `json:"dir,omitempty"`
}

// siteInfo is the one line the site process prints once it serves.
type siteInfo struct {
	Seeds []string `json:"seeds"`
	// URLs is the site's known URL list (synthetic and generated sites);
	// empty for a directory, whose list the benchmark walks itself.
	URLs   []string `json:"urls,omitempty"`
	Levels int      `json:"levels,omitempty"`
	// Hosts maps the synthetic web's host names to their loopback
	// addresses; empty when the seeds are IP literals.
	Hosts map[string]netip.Addr `json:"hosts,omitempty"`
}

// SiteLauncher builds the command of the site process: one that calls
// ServeSite with spec. Run starts it with pipes on its stdin and stdout.
type SiteLauncher func(spec SiteSpec) (*exec.Cmd, error)

// ServeSite serves spec's site, prints one JSON line describing it to out,
// and serves until in reaches its end (the benchmark closed the pipe or
// died) or ctx ends. It is the body of the site process, which runs apart
// from the benchmark so that each side of its ratios pays only its own
// CPU.
func ServeSite(ctx context.Context, spec SiteSpec, in io.Reader, out io.Writer) error {
	info, closeSite, err := serveSpec(ctx, spec)
	if err != nil {
		return err
	}
	defer closeSite()
	if err := json.NewEncoder(out).Encode(info); err != nil {
		return fmt.Errorf("bench site: announce: %w", err)
	}
	eof := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, in); close(eof) }()
	select {
	case <-eof:
	case <-ctx.Done():
	}
	return nil
}

// serveSpec starts the site spec names in this process.
func serveSpec(ctx context.Context, spec SiteSpec) (*siteInfo, func() error, error) {
	switch spec.Kind {
	case SiteSynthetic:
		w, err := testweb.Generate(testweb.Config{Seed: 1, Hosts: spec.Hosts, PagesPerHost: spec.PagesPerHost,
			PageBytes: spec.PageBytes, LargeFileBytes: 64 << 10})
		if err != nil {
			return nil, nil, fmt.Errorf("bench site: %w", err)
		}
		srv, err := w.Start(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("bench site: %w", err)
		}
		urls := srv.Reachable(testweb.ReachOptions{ObeyRobots: true, FollowSitemaps: true})
		return &siteInfo{Seeds: srv.Seeds(), URLs: urls, Hosts: srv.Resolver().Addrs()}, srv.Close, nil
	case SiteDocs:
		gen := func() error { return docsite.Generate(spec.Dir, spec.DocsPages, 1) }
		levels := 2 // the index, then every page and the style sheet
		if spec.DocsFanout > 0 {
			gen = func() error { return docsite.GenerateTree(spec.Dir, spec.DocsPages, spec.DocsFanout, 1) }
			levels = 1 + docsite.Levels(spec.DocsPages, spec.DocsFanout)
		}
		if err := gen(); err != nil {
			return nil, nil, fmt.Errorf("bench docs site: %w", err)
		}
		srv, err := docsite.Serve(ctx, spec.Dir, "127.0.0.1:0")
		if err != nil {
			return nil, nil, fmt.Errorf("bench docs site: %w", err)
		}
		urls, err := docsite.Reachable(spec.Dir, srv.URL())
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("bench docs site: %w", err), srv.Close())
		}
		return &siteInfo{Seeds: []string{srv.URL() + "/"}, URLs: urls, Levels: levels}, srv.Close, nil
	case SiteDir:
		srv, err := docsite.ServeDir(ctx, spec.Dir, "127.0.0.1:0")
		if err != nil {
			return nil, nil, fmt.Errorf("bench site: %w", err)
		}
		return &siteInfo{Seeds: []string{srv.URL() + "/"}}, srv.Close, nil
	default:
		return nil, nil, fmt.Errorf("bench: site %q is not %s, %s or %s<directory>", spec.Kind, SiteSynthetic, SiteDocs, SiteDir+":")
	}
}

// siteProc is the running site process, seen from the benchmark.
type siteProc struct {
	site
	cmd   *exec.Cmd
	stdin io.Closer
}

// startSite starts the site process and waits for its description.
func startSite(ctx context.Context, launch SiteLauncher, spec SiteSpec) (*siteProc, error) {
	cmd, err := launch(spec)
	if err != nil {
		return nil, fmt.Errorf("bench site process: %w", err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("bench site process: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench site process: %w", err)
	}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4 << 10}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench site process: start %s: %w", cmd.Path, err)
	}
	p := &siteProc{cmd: cmd, stdin: stdin}
	line := make(chan []byte, 1)
	go func() {
		b, _ := bufio.NewReader(stdout).ReadBytes('\n')
		line <- b
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var b []byte
	select {
	case b = <-line:
	case <-ctx.Done():
		_, _ = p.close()
		return nil, fmt.Errorf("bench site process: %w", ctx.Err())
	}
	var info siteInfo
	if err := json.Unmarshal(b, &info); err != nil || len(info.Seeds) == 0 {
		_, werr := p.close()
		return nil, fmt.Errorf("bench site process did not start: %v %s", werr, strings.TrimSpace(stderr.String()))
	}
	p.seeds, p.urls, p.levels = info.Seeds, info.URLs, info.Levels
	if len(info.Hosts) > 0 {
		p.resolver = testweb.NewResolver(info.Hosts)
	}
	return p, nil
}

// close ends the site process and returns the CPU it used.
func (p *siteProc) close() (time.Duration, error) {
	_ = p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		err = fmt.Errorf("bench site process did not stop: %w", <-done)
	}
	if p.cmd.ProcessState == nil {
		return 0, err
	}
	return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime(), err
}

// siteCPU is the CPU the site process has used so far, from /proc (0
// where there is none).
func (p *siteProc) cpu() time.Duration {
	b, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(p.cmd.Process.Pid), "stat"))
	if err != nil {
		return 0
	}
	return procStatCPU(string(b))
}

// procStatCPU reads utime+stime from a /proc/PID/stat line.
func procStatCPU(stat string) time.Duration {
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis are fixed: utime and stime are the 12th and 13th.
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0
	}
	var u, s int64
	_, err1 := fmt.Sscan(f[11], &u)
	_, err2 := fmt.Sscan(f[12], &s)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+s) * (time.Second / 100) // USER_HZ
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(b []byte) (int, error) {
	if l.n > 0 {
		k := min(len(b), l.n)
		_, _ = l.w.Write(b[:k])
		l.n -= k
	}
	return len(b), nil
}
