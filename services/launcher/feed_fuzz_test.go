package launcher

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadFeed reads fuzzed bytes as a crawl feed. Whatever the feed holds,
// ReadFeed finishes, accounts for every line (a target, a bad line with its
// line number and reason, or a blank line), and every target it yields has
// only absolute http(s) seeds.
func FuzzReadFeed(f *testing.F) {
	for _, name := range []string{"crawl-feed-npld.jsonl", "crawl-feed-bad.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	for _, in := range []string{
		goodLine, "\xef\xbb\xbf" + goodLine + "\r\n\n",
		`{"id": 1, "seeds": ["mailto:x@example.org", "https://a.example/"]}`,
		`{"id": 1, "seeds": ["https://a.example/"], "schedules": [{"frequency": "DAILY", "startDate": 1e400}]}`,
		`{"id": 1, "seeds": ["https://a.example/"], "secretId": 12345678901234567890}`,
		`{"id": 1e30, "seeds": ["https://a.example/"]}`,
	} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const maxLine = 4096
		fr := FeedReader{MaxLineBytes: maxLine, MaxErrors: 5}
		var targets []Target
		st, err := fr.ReadFeed(context.Background(), bytes.NewReader(b), "fuzz", func(tg Target) error {
			targets = append(targets, tg)
			return nil
		})
		if err != nil {
			t.Fatalf("ReadFeed: %v", err)
		}
		if st.Targets != len(targets) || st.Targets+st.BadLines > st.Lines {
			t.Fatalf("stats %+v for %d targets", st, len(targets))
		}
		if max := bytes.Count(b, []byte("\n")) + 1; st.Lines > max {
			t.Fatalf("%d lines counted in %d", st.Lines, max)
		}
		if len(st.Errors) > 5 || len(st.Warnings) > 5 {
			t.Fatalf("kept %d errors and %d warnings, want at most 5", len(st.Errors), len(st.Warnings))
		}
		for _, e := range append(st.Errors, st.Warnings...) {
			if e.Line < 1 || e.Line > st.Lines || e.Reason == "" {
				t.Fatalf("line error %+v out of %d lines", e, st.Lines)
			}
		}
		for _, tg := range targets {
			if len(tg.Seeds) == 0 || tg.Line < 1 || tg.Line > st.Lines {
				t.Fatalf("target %+v", tg)
			}
			for _, s := range tg.Seeds {
				u, err := url.Parse(s)
				if err != nil || u.Host == "" {
					t.Fatalf("target %d seed %q does not parse: %v", tg.ID, s, err)
				}
				if sc := strings.ToLower(u.Scheme); sc != "http" && sc != "https" {
					t.Fatalf("target %d seed %q is not http(s)", tg.ID, s)
				}
			}
		}
	})
}

// FuzzBulkLine parses one line of a bulk seed list (a bare host or URL, a
// comment, or a feed line) as `trawler launch --bulk` does: a line is
// blank, excluded, bad with a reason, or seeds with a SURT prefix each.
func FuzzBulkLine(f *testing.F) {
	for _, in := range []string{
		"example.org", "example.org/path", "https://Example.ORG:8443/a?b", "# comment", "",
		"mailto:x@example.org", "http://", "exa mple.org", "[::1]:80/x", goodLine,
		`{"id": 7, "seeds": ["https://a.example/"], "depth": "CAPPED", "scope": "subdomains"}`,
	} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		b := &bulkRun{resume: Checkpoint{Line: 1 << 30}} // before the checkpoint: nothing is sent
		l := bulkLine{n: 1, raw: raw}
		b.parse(&l)
		if l.err != nil {
			if l.err.Error() == "" || len(l.seeds) > 0 {
				t.Fatalf("line %q: error %q with %d seeds", raw, l.err, len(l.seeds))
			}
			return
		}
		for _, s := range l.seeds {
			if s.prefix == "" || s.value != nil {
				t.Fatalf("line %q: seed %+v", raw, s)
			}
			if u, err := url.Parse(s.url); err != nil || u.Host == "" {
				t.Fatalf("line %q: seed %q does not parse: %v", raw, s.url, err)
			}
		}
	})
}
