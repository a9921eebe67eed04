package docfind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nlnwa/gowarc"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// Finder turns crawled events into documents, each once by digest.
type Finder struct {
	targets Targets
	dirs    []string
	rdb     redis.UniversalClient
	key     string
}

// NewFinder returns a finder for the watched targets; WARC records are
// looked for in dirs (the event names the file, not its directory); seen
// digests are kept in Redis under crawl's namespace.
func NewFinder(targets Targets, dirs []string, rdb redis.UniversalClient, crawl string) *Finder {
	return &Finder{targets: targets, dirs: dirs, rdb: rdb, key: "trawler:docs:{" + crawl + "}:digests"}
}

// Find returns the new documents among events: candidates whose digest
// was not seen before (nor earlier in events), with their landing pages.
// Nothing is marked seen: call Mark once they are published.
func (f *Finder) Find(ctx context.Context, events []messages.Crawled) ([]Document, error) {
	var cands []Document
	var evs []*messages.Crawled
	batch := map[string]bool{}
	for i := range events {
		d, ok := f.targets.Candidate(&events[i])
		if !ok || batch[d.Digest] {
			continue
		}
		batch[d.Digest] = true
		cands = append(cands, d)
		evs = append(evs, &events[i])
	}
	if len(cands) == 0 {
		return nil, nil
	}
	pipe := f.rdb.Pipeline()
	seen := make([]*redis.BoolCmd, len(cands))
	for i, d := range cands {
		seen[i] = pipe.HExists(ctx, f.key, d.Digest)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("document finder: seen digests: %w", err)
	}
	var out []Document
	for i, d := range cands {
		if seen[i].Val() {
			continue
		}
		if up := f.linkUp(evs[i]); up != "" {
			d.LandingPage, d.LandingFrom = up, "link-up"
		}
		out = append(out, d)
	}
	return out, nil
}

// Mark records the documents' digests as seen.
func (f *Finder) Mark(ctx context.Context, docs []Document) error {
	if len(docs) == 0 {
		return nil
	}
	args := make([]any, 0, 2*len(docs))
	for _, d := range docs {
		args = append(args, d.Digest, d.URL)
	}
	if err := f.rdb.HSet(ctx, f.key, args...).Err(); err != nil {
		return fmt.Errorf("document finder: mark digests: %w", err)
	}
	return nil
}

// linkUp reads the response record the event points at and returns its
// Link rel="up" target; "" when the record cannot be read or has none
// (the via then stands).
func (f *Finder) linkUp(ev *messages.Crawled) string {
	path := f.locate(*ev.WarcFilename)
	if path == "" {
		return ""
	}
	r, err := warcwriter.OpenReader(path, *ev.WarcOffset)
	if err != nil {
		return ""
	}
	defer func() { _ = r.Close() }()
	rec, _, _, err := r.Next()
	if err != nil {
		return ""
	}
	defer func() { _ = rec.Close() }()
	hb, ok := rec.Block().(gowarc.HttpResponseBlock)
	if !ok || hb.HttpHeader() == nil {
		return ""
	}
	return LinkUp(ev.URL, hb.HttpHeader().Values("Link"))
}

// locate finds a WARC file in the directories, closed or still open.
func (f *Finder) locate(name string) string {
	if name == "" || filepath.Base(name) != name {
		return ""
	}
	for _, d := range f.dirs {
		// The worker may still be writing the file, or have just renamed it.
		for _, p := range []string{filepath.Join(d, name), filepath.Join(d, name+".open")} {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}
