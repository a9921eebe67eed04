package main

import (
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/testwait"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/services/standalone"
)

// A standalone started without token flags generates its admin token
// (mode 0600) into its data directory; `ctl` and `state backup` pointed at
// the directory, or ctl run beside ./trawler-data with no flags at all,
// find it; the CDX API's writes refuse requests without it.
func TestStandaloneTokenFoundByCtlAndBackup(t *testing.T) {
	site, err := testweb.Generate(testweb.Config{Seed: 5, Hosts: 1, PagesPerHost: 20})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	work := t.TempDir()
	data := filepath.Join(work, "trawler-data")
	var sc standalone.Config
	fs := flag.NewFlagSet("standalone", flag.ContinueOnError)
	sc.RegisterFlags(fs)
	if err := fs.Parse([]string{"--data", data, "--seed", srv.Seeds()[0], "--admin-addr", "127.0.0.1:0",
		"--cdx-addr", "127.0.0.1:0", "--kafka-listen", "127.0.0.1:0", "--render", "off", "--threads", "2"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- standaloneRun(ctx, common{profilePath: "demo", logFormat: "text", logLevel: "error"}, sc, srv.Resolver(), io.Discard, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("standalone: %v", err)
		}
	})
	var e standalone.Endpoints
	testwait.Until(t, 2*time.Minute, "standalone.json", func() bool {
		e, err = standalone.ReadEndpoints(data)
		return err == nil
	})

	tokenFile := filepath.Join(data, standalone.AdminTokenFile)
	st, err := os.Stat(tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("generated token file: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	if e.AdminTokenFile != tokenFile {
		t.Fatalf("standalone.json names token file %q, want %q", e.AdminTokenFile, tokenFile)
	}
	resp, err := http.Post("http://"+e.CDX+"/fc", "text/plain", strings.NewReader("x\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("CDX write without the token: %s", resp.Status)
	}

	t.Setenv("TRAWLER_ADMIN_TOKEN_FILE", "")
	t.Setenv("TRAWLER_API", "")
	if code, out, errOut := runCLI(t, "ctl", "--standalone", data, "status"); code != 0 || !strings.Contains(out, "frontier fc-npld") {
		t.Fatalf("ctl --standalone: %d\n%s%s", code, out, errOut)
	}
	t.Chdir(work)
	if code, out, errOut := runCLI(t, "ctl", "status"); code != 0 || !strings.Contains(out, "frontier fc-npld") {
		t.Fatalf("ctl beside ./trawler-data: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, "state", "backup", "--standalone", data, "--out", filepath.Join(t.TempDir(), "backup"), "--log-level", "warn")
	if code != 0 || !strings.Contains(out, "Backup ") {
		t.Fatalf("state backup --standalone: %d\n%s%s", code, out, errOut)
	}
}
