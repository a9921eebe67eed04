package docfind

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Watched is one line of the launcher's watched export
// (services/launcher.WatchedSeed; decoded here, since pkg never imports a
// role).
type Watched struct {
	URL               string `json:"url"`
	TargetID          int64  `json:"targetId"`
	Title             string `json:"title"`
	Source            string `json:"source"`
	DocumentURLScheme string `json:"documentUrlScheme,omitempty"`
}

// Targets maps the source tags of watched targets to their seeds.
type Targets map[string]Watched

// ReadWatched reads a watched export. Bad lines are skipped and returned
// as errors with their line numbers; the good ones are kept.
func ReadWatched(r io.Reader) (Targets, []error) {
	out := Targets{}
	var bad []error
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var w Watched
		if err := json.Unmarshal([]byte(line), &w); err != nil || w.Source == "" {
			bad = append(bad, fmt.Errorf("watched export line %d: %v (source %q)", n, err, w.Source))
			continue
		}
		if _, ok := out[w.Source]; !ok {
			out[w.Source] = w
		}
	}
	if err := sc.Err(); err != nil {
		bad = append(bad, fmt.Errorf("watched export: %w", err))
	}
	return out, bad
}

// LoadWatched reads the watched export at path.
func LoadWatched(path string) (Targets, []error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("watched export: %w", err)
	}
	defer func() { _ = f.Close() }()
	t, bad := ReadWatched(f)
	return t, bad, nil
}
