package browser

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"
)

const (
	// deadURL replaces the Google service endpoints that Chromium contacts
	// on its own even with background networking off; port 9 (discard) is
	// closed on most machines, and the request is refused at once.
	deadURL = "http://127.0.0.1:9/"
	// startTimeout bounds one browser launch, so that a Chromium that never
	// answers on its DevTools pipe cannot block New or a restart for ever.
	startTimeout = 30 * time.Second
	// closeTimeout is how long closing a tab and disposing of its browser
	// context may take before the browser counts as hung and is restarted.
	closeTimeout = 5 * time.Second
)

// instance is one running Chromium process and its DevTools connection.
type instance struct {
	dir  string // the --user-data-dir, removed by stop
	pid  int
	pgid int

	// ctx is chromedp's browser context. chromedp cancels it when the
	// connection to the browser drops, so Done also means "crashed".
	ctx         context.Context
	cancel      context.CancelFunc
	allocCancel context.CancelFunc

	stopOnce sync.Once
}

// dead reports whether the browser's connection is gone, because it crashed or
// because it was stopped.
func (in *instance) dead() bool {
	if in.ctx.Err() != nil {
		return true
	}
	// LostConnection closes before chromedp cancels ctx (from another
	// goroutine), and before any command fails because of the loss; checking it
	// too avoids mistaking a crash for an ordinary error in that window.
	if c := chromedp.FromContext(in.ctx); c != nil && c.Browser != nil {
		select {
		case <-c.Browser.LostConnection:
			return true
		default:
		}
	}
	return false
}

// flags returns the allocator options of one launch that uses dir as its
// profile directory.
func (cfg *Config) flags(dir string) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(cfg.ExecPath),
		chromedp.Flag("headless", "new"),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		// Pages' media start without a click (muted), so a player that
		// loads its stream only on play gets it loaded and recorded.
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		// The archive must record what the page asked for over HTTP/1.1 or
		// HTTP/2 through the proxy; QUIC would be UDP that no HTTP proxy sees.
		chromedp.Flag("disable-quic", true),
		// Background and component traffic (updates, sync, metrics, safe
		// browsing lists, Google services) would go through the fallback proxy
		// at best; keep it from being attempted at all.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("no-pings", true),
		// Tabs of concurrent renders live in separate windows; without these
		// Chromium may throttle timers and frames of the one that is not in
		// front, which delays scripts and IntersectionObservers that lazy
		// loading depends on.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		// /dev/shm is tiny in most containers; Chromium crashes when it fills.
		chromedp.Flag("disable-dev-shm-usage", true),
		// HttpsUpgrades turns an http:// navigation to a public host name into
		// an https:// attempt first (a CONNECT at the proxy; tested):
		// not what was archived. HttpsFirstBalancedModeAutoEnable is its
		// sibling for later versions. NetworkTimeServiceQuerying stops
		// clients2.google.com/time queries (tested); the others stop
		// background fetches and services.
		chromedp.Flag("disable-features", strings.Join([]string{
			"HttpsUpgrades",
			"HttpsFirstBalancedModeAutoEnable",
			"MediaRouter",
			"OptimizationHints",
			"Translate",
			"NetworkTimeServiceQuerying",
			"OptimizationGuideModelDownloading",
			"CertificateTransparencyComponentUpdater",
			"AutofillServerCommunication",
		}, ",")),
		chromedp.Flag("disable-component-extensions-with-background-pages", true),
		// Even with the flags above Chromium 156 contacts accounts.google.com
		// (sign-in) and update.googleapis.com (component updater) at start;
		// pointing both services at a dead loopback URL stops them (tested).
		chromedp.Flag("gaia-url", deadURL),
		chromedp.Flag("component-updater", "url-source="+deadURL),
		chromedp.Flag("proxy-server", cfg.FallbackProxy),
		chromedp.Flag("proxy-bypass-list", bypassLoopback),
		chromedp.Flag("user-data-dir", dir),
		chromedp.Flag("window-size", fmt.Sprintf("%d,%d", cfg.Viewport.Width, cfg.Viewport.Height)),
		// chromedp adds --no-sandbox by itself when it runs as root unless
		// the flag is set; set it explicitly so Config decides.
		chromedp.Flag("no-sandbox", cfg.NoSandbox),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			// Its own process group lets stop kill Chromium's helpers in one
			// call; Pdeathsig (what chromedp sets when there is no
			// ModifyCmdFunc) still kills the browser if this process dies.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		}),
		chromedp.CombinedOutput(&logWriter{log: cfg.Log}),
	}
	if len(cfg.SPKIHashes) > 0 {
		opts = append(opts, chromedp.Flag("ignore-certificate-errors-spki-list", strings.Join(cfg.SPKIHashes, ",")))
	}
	if cfg.UserAgent != "" {
		opts = append(opts, chromedp.Flag("user-agent", cfg.UserAgent))
	}
	return opts
}

// launch starts a browser with a fresh profile directory. ctx bounds only the
// start; the browser runs until stop.
func (p *Pool) launch(ctx context.Context) (*instance, error) {
	dir, err := os.MkdirTemp(p.cfg.DataDir, "trawler-browser-")
	if err != nil {
		return nil, fmt.Errorf("browser: profile directory: %w", err)
	}
	// The allocator and browser contexts are not children of ctx: the browser
	// outlives the call that started it.
	actx, acancel := chromedp.NewExecAllocator(context.Background(), p.cfg.flags(dir)...)
	bctx, bcancel := chromedp.NewContext(actx,
		chromedp.WithErrorf(func(format string, args ...any) {
			p.log.Debug("chromedp error", "msg", fmt.Sprintf(format, args...))
		}))
	in := &instance{dir: dir, ctx: bctx, cancel: bcancel, allocCancel: acancel}

	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case err = <-started:
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = fmt.Errorf("no answer after %s", startTimeout)
	}
	if err == nil {
		if proc := chromedp.FromContext(bctx).Browser.Process(); proc != nil {
			in.pid = proc.Pid
			in.pgid = proc.Pid
		}
		p.log.Info("browser started", "pid", in.pid, "dir", dir)
		return in, nil
	}
	in.stop()
	<-started // it returns once bctx is canceled
	return nil, fmt.Errorf("browser: starting %s: %w", p.cfg.ExecPath, err)
}

// stop kills the browser and all its helper processes, waits for chromedp to
// reap it and removes the profile directory. It is safe to call more than once.
func (in *instance) stop() {
	in.stopOnce.Do(func() {
		// Kill before cancelling: chromedp waits for the browser's output to
		// end, and helpers that survive the main process keep it open.
		if in.pgid > 0 {
			_ = syscall.Kill(-in.pgid, syscall.SIGKILL)
		}
		killUsing(in.dir)
		in.cancel()
		in.allocCancel()
		killUsing(in.dir)
		removeSingleton(in.dir)
		if err := os.RemoveAll(in.dir); err != nil {
			// A helper can still be writing for a moment after SIGKILL.
			_ = os.RemoveAll(in.dir)
		}
	})
}

// singletonPrefix names the directory Chromium makes under TMPDIR for its
// SingletonSocket, out of the profile so the socket's path fits
// sockaddr_un; the profile's SingletonSocket is a link into it.
const singletonPrefix = "org.chromium.Chromium."

// removeSingleton removes the socket directory of the profile dir's
// browser. Chromium removes it on a clean exit only, and stop kills: without
// this every launch left one in TMPDIR (1,358 on a test machine).
func removeSingleton(dir string) {
	if sock := singletonDir(dir); sock != "" {
		_ = os.RemoveAll(sock)
	}
}

// singletonDir is the socket directory that profile dir's SingletonSocket
// links to, or "" when there is none of Chromium's naming.
func singletonDir(dir string) string {
	target, err := os.Readlink(filepath.Join(dir, "SingletonSocket"))
	if err != nil {
		return ""
	}
	sock := filepath.Dir(target)
	if !filepath.IsAbs(sock) || !strings.HasPrefix(filepath.Base(sock), singletonPrefix) {
		return ""
	}
	return sock
}

// killUsing kills every process whose command line has --user-data-dir=dir,
// until several scans in a row find none. Helpers are found by their flag
// rather than the process group, because Chromium's zygote may leave it.
func killUsing(dir string) {
	const (
		quiet = 3
		pause = 10 * time.Millisecond
		limit = 2 * time.Second
	)
	deadline := time.Now().Add(limit)
	for n := 0; n < quiet && time.Now().Before(deadline); time.Sleep(pause) {
		if pids := processesUsing(dir); len(pids) == 0 {
			n++
		} else {
			n = 0
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// processesUsing lists the live processes started with --user-data-dir=dir.
// Zombies have an empty command line and are not listed.
func processesUsing(dir string) []int {
	want := []byte("--user-data-dir=" + dir)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for arg := range bytes.SplitSeq(cmdline, []byte{0}) {
			if bytes.Equal(arg, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// logWriter sends Chromium's output to the log, one record per line, at
// debug level: it is noisy, but the first thing to read when a launch fails.
type logWriter struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(w.buf[:i])); line != "" {
			w.log.Debug("chromium", "out", line)
		}
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // a line without end must not grow for ever
		w.buf = w.buf[:0]
	}
	return len(b), nil
}

// ReapStale removes the profile directories under dir that an earlier
// process left when it died without stopping its browser (kill -9), after
// killing whatever still runs with them. Only dir's owner may call it: a
// pool with Config.ReapStale at its start, or a janitor holding a dead
// renderer's identity.
func ReapStale(dir string, log *slog.Logger) {
	stale, _ := filepath.Glob(filepath.Join(dir, "trawler-browser-*"))
	for _, d := range stale {
		killUsing(d)
		if err := os.RemoveAll(d); err != nil {
			log.Warn("stale browser profile not removed", "dir", d, "err", err)
			continue
		}
		log.Info("removed a browser profile left by a crashed run", "dir", d)
	}
}
