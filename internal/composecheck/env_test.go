package composecheck

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// buildTrawler builds cmd/trawler once for the test and returns its path.
func buildTrawler(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build cmd/trawler: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "trawler")
	cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/trawler")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/trawler: %v\n%s", err, out)
	}
	return bin
}

// helpFlag matches a flag line of Go's flag.PrintDefaults.
var helpFlag = regexp.MustCompile(`(?m)^  -([a-z0-9][a-z0-9-]*)`)

// flagsOf returns the flag names `trawler ARGS --help` lists.
func flagsOf(t *testing.T, bin string, args []string) map[string]bool {
	t.Helper()
	cmd := exec.Command(bin, append(append([]string(nil), args...), "--help")...)
	// No TRAWLER_* from the test's own environment.
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("trawler %s --help: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	flags := map[string]bool{}
	for _, m := range helpFlag.FindAllStringSubmatch(stderr.String(), -1) {
		flags[m[1]] = true
	}
	if len(flags) == 0 {
		t.Fatalf("trawler %s --help lists no flags:\n%s", strings.Join(args, " "), stderr.String())
	}
	return flags
}

// TestComposeEnvIsFlags checks that every TRAWLER_* variable a Trawler
// service of docker-compose.yml sets is a flag of that service's command:
// a variable that is not is silently ignored by the binary (it only warns),
// so a misspelt or misplaced one would leave a setting at its default.
func TestComposeEnvIsFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/trawler")
	}
	p, err := LoadCompose(context.Background(), filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	bin := buildTrawler(t)
	flagsByCmd := map[string]map[string]bool{}
	for _, name := range trawlerServices(p, root) {
		s := p.Services[name]
		args := []string(s.Command)
		if len(args) == 0 {
			t.Errorf("%s: no command; the image's default says nothing about its flags", name)
			continue
		}
		key := strings.Join(args, " ")
		flags, ok := flagsByCmd[key]
		if !ok {
			flags = flagsOf(t, bin, args)
			flagsByCmd[key] = flags
		}
		var bad []string
		for v := range s.Environment {
			if !strings.HasPrefix(v, "TRAWLER_") {
				continue
			}
			flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(v, "TRAWLER_")), "_", "-")
			if !flags[flag] {
				bad = append(bad, v)
			}
		}
		sort.Strings(bad)
		for _, v := range bad {
			t.Errorf("%s: %s is not a flag of `trawler %s` (no --%s)", name, v, key,
				strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(v, "TRAWLER_")), "_", "-"))
		}
	}
}

// TestComposeLauncherHasFeed: `launcher serve` exits at once without a
// feed, so a fresh `docker compose up` would restart it forever.
func TestComposeLauncherHasFeed(t *testing.T) {
	p, err := LoadCompose(context.Background(), filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := p.Services["launcher"]
	if !ok {
		t.Fatal("no launcher service")
	}
	feed := s.Environment["TRAWLER_FEED"]
	if feed == nil || *feed == "" {
		t.Fatal("launcher sets no TRAWLER_FEED")
	}
	if strings.HasPrefix(*feed, "http://") || strings.HasPrefix(*feed, "https://") {
		return
	}
	for _, v := range s.Volumes {
		if v.Type == "bind" && (*feed == v.Target || strings.HasPrefix(*feed, v.Target+"/")) {
			src := filepath.Join(v.Source, strings.TrimPrefix(*feed, v.Target))
			if !exists(src) {
				t.Errorf("launcher feed %s: %s does not exist", *feed, src)
			}
			return
		}
	}
	t.Errorf("launcher feed %s is not on a bind mount of the repository", *feed)
}
