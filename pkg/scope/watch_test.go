package scope

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/testwait"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestExclusionHotReload appends a prefix to the watched exclusion file
// while decisions are being made; URIs under it must become out of scope,
// and fail the fetch-time recheck, without a restart.
func TestExclusionHotReload(t *testing.T) {
	dir := t.TempDir()
	excl := writeFile(t, dir, "exclude.txt", "# complaints\n+http://(org,blocked,\n")
	cfg := profile.Default().Scope
	cfg.ExcludedSurtsFile = excl
	log, logs := testlog.New(slog.LevelDebug)
	e := newEngine(t, cfg, Options{Seeds: seedsWith(t, "http://www.site.example/"), PollInterval: 10 * time.Millisecond, Logger: log})
	runEngine(t, e)

	page := "http://www.site.example/private/page"
	if d := e.Decide(context.Background(), candidate(t, page, "", "L", false)); !d.Accepted() {
		t.Fatalf("before the complaint: %s", d)
	}
	// A crawl keeps deciding while the file changes.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				e.Decide(context.Background(), candidate(t, "http://www.site.example/other", "", "L", false))
			}
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait() })

	appendLine(t, excl, "https://www.site.example/private/")
	surt := candidate(t, page, "", "", false).SURT
	testwait.Until(t, 10*time.Second, "the appended exclusion to apply", func() bool { return e.Excluded(surt) })
	if d := e.Decide(context.Background(), candidate(t, page, "", "L", false)); d.String() != "REJECT by rule #11 ExcludedSurtsDecideRule" {
		t.Fatalf("after the complaint: %s", d)
	}
	if d := e.Decide(context.Background(), candidate(t, "http://www.site.example/public", "", "L", false)); !d.Accepted() {
		t.Fatalf("an unrelated page was excluded: %s", d)
	}
	if !strings.Contains(logs.String(), "surt file reloaded") {
		t.Fatalf("no reload logged:\n%s", logs)
	}
}

// TestReloadKeepsPreviousSetOnError writes a bad line into a watched file:
// the previous prefixes stay, the file and line are logged, and a fixed
// file is picked up.
func TestReloadKeepsPreviousSetOnError(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "surts.txt", "+http://(uk,co,old,\n")
	log, logs := testlog.New(slog.LevelDebug)
	cfg := scopeFromYAML(t, "rules:\n- {rule: SurtPrefixedDecideRule, seedsAsSurtPrefixes: false, surtsSourceFile: surts.txt}\n")
	e := newEngine(t, cfg, Options{BaseDir: dir, Logger: log})
	ctx := context.Background()
	accepts := func(u string) bool { return e.Decide(ctx, candidate(t, u, "", "L", false)).Accepted() }

	writeFile(t, dir, "surts.txt", "+http://(uk,co,new,\n# fine so far\nhttp://(uk,co,broken,\n")
	e.Reload(ctx)
	if !accepts("http://old.co.uk/") || accepts("http://new.co.uk/") {
		t.Fatal("a failed reload changed the prefix set")
	}
	msg := logs.String()
	if !strings.Contains(msg, "reload failed") || !strings.Contains(msg, "file="+file) || !strings.Contains(msg, "line=3") ||
		!strings.Contains(msg, "leading") {
		t.Fatalf("log does not name file, line and reason:\n%s", msg)
	}
	e.Reload(ctx) // unchanged bad file: not reported again
	if strings.Count(logs.String(), "reload failed") != 1 {
		t.Fatalf("the same bad file was reported twice:\n%s", logs)
	}

	writeFile(t, dir, "surts.txt", "+http://(uk,co,new,\n# fixed\n+http://(uk,co,fixed,\n")
	e.Reload(ctx)
	if accepts("http://old.co.uk/") || !accepts("http://new.co.uk/") || !accepts("http://fixed.co.uk/") {
		t.Fatal("the fixed file was not applied")
	}

	// A zero-byte file (mid-rewrite) is not applied; a comment-only file is.
	writeFile(t, dir, "surts.txt", "")
	e.Reload(ctx)
	if !accepts("http://new.co.uk/") || !strings.Contains(logs.String(), "surt file is empty") {
		t.Fatal("an empty file emptied the set")
	}
	writeFile(t, dir, "surts.txt", "# nothing in scope any more\n")
	e.Reload(ctx)
	if accepts("http://new.co.uk/") {
		t.Fatal("a comment-only file did not empty the set")
	}

	// A file that disappears keeps the last set.
	writeFile(t, dir, "surts.txt", "+http://(uk,co,last,\n")
	e.Reload(ctx)
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	e.Reload(ctx)
	if !accepts("http://last.co.uk/") || !strings.Contains(logs.String(), "unreadable") {
		t.Fatal("a removed file dropped the set or was not reported")
	}
}
