package scope

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// scopeFromYAML decodes a profile scope section (the text under "scope:")
// over the defaults, as a profile file would be loaded.
func scopeFromYAML(t testing.TB, section string) profile.Scope {
	t.Helper()
	p := profile.Default()
	doc := "scope:\n" + indent(section)
	if err := profile.Decode(strings.NewReader(doc), &p); err != nil {
		t.Fatalf("decode profile: %v\n%s", err, doc)
	}
	return p.Scope
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// newEngine builds an engine and closes it with the test.
func newEngine(t testing.TB, cfg profile.Scope, opts Options) *Engine {
	t.Helper()
	e, err := New(cfg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

// candidate builds a candidate or fails the test.
func candidate(t testing.TB, url, via, hops string, seed bool) *Candidate {
	t.Helper()
	c, err := NewCandidate(url)
	if err != nil {
		t.Fatalf("NewCandidate(%q): %v", url, err)
	}
	c.Via, c.HopPath, c.IsSeed = via, hops, seed
	return c
}

// writeFile writes a file under dir and returns its path.
func writeFile(t testing.TB, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runEngine runs the engine's poll loop until the test ends.
func runEngine(t testing.TB, e *Engine) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}
