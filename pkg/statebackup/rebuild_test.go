package statebackup_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/statebackup"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
	"github.com/trawler-crawl/trawler/services/standalone"
)

// redisAt starts a redis-server on dir (its AOF, if any) and returns the
// recently-crawled DB of fc-npld on it.
func redisAt(t *testing.T, dir string) *recentdb.DB {
	t.Helper()
	_, rdb := embeddedtest.RedisServer(t, dir)
	db, err := recentdb.New(rdb, recentdb.Options{Crawl: "fc", Stream: "npld"})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// comparable is what a CDX line can restore of an entry: the capture and
// the original to the second, without validators or record ids.
type comparable struct {
	Capture, Original string
}

func view(e recentdb.Entry) comparable {
	var c comparable
	if e.Capture != nil {
		k := *e.Capture
		k.Time, k.ETag, k.LastModified = k.Time.Truncate(time.Second), "", ""
		c.Capture = strings.TrimSpace(strings.ReplaceAll(fmtAny(k), "\n", " "))
	}
	if e.Original != nil {
		o := *e.Original
		o.Time, o.RecordID = o.Time.Truncate(time.Second), ""
		c.Original = fmtAny(o)
	}
	return c
}

// The recently-crawled DB rebuilt from the CDX index, and from the WARC
// files, holds for every captured URL what the cdxwriter wrote from the
// crawled events, to the second (a CDX line has no milliseconds, no
// validators and no failures).
func TestRebuildRecentMatchesCDXWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a standalone crawl")
	}
	ctx := context.Background()
	site, err := testweb.Generate(testweb.Config{Seed: 5, Hosts: 2, PagesPerHost: 15})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	dir := t.TempDir()
	p := crawlProfile()
	p.Politeness.MinDelayMs, p.Politeness.MaxDelayMs = 0, 10
	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	_, err = standalone.Run(rctx, standalone.Config{DataDir: dir, Seeds: srv.Seeds(), UntilIdle: true,
		KafkaListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Crawl: "fc", Stream: "npld", Threads: 4, Partitions: 2, TimeZone: "UTC"},
		standalone.Deps{Profile: p, Resolver: srv.Resolver(), Version: "test", Registry: prometheus.NewRegistry(),
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}

	written := redisAt(t, filepath.Join(dir, "redis")) // what the cdxwriter wrote
	fromIndex := redisAt(t, t.TempDir())
	fromWARCs := redisAt(t, t.TempDir())

	ix, err := cdxindex.Open(filepath.Join(dir, "cdx", "index"), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	rep, err := statebackup.RebuildFromIndex(ctx, ix, "fc", fromIndex)
	if err != nil {
		t.Fatal(err)
	}
	warcs, _ := filepath.Glob(filepath.Join(dir, "warcs", "fc-npld", "*.warc.gz"))
	repW, err := statebackup.RebuildFromWARCs(ctx, warcs, fromWARCs, func(e *warcindex.RecordError) { t.Errorf("WARC record: %v", e) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("from the index: %+v; from %d WARC files: %+v", rep, len(warcs), repW)
	if rep.Updates == 0 || rep.Updates != repW.Updates {
		t.Fatalf("%d updates from the index, %d from the WARCs", rep.Updates, repW.Updates)
	}

	seen := map[string]bool{}
	var urls []string
	if err := ix.Each(ctx, "fc", func(l cdx.Line) error {
		if strings.HasPrefix(l.Original, "http") && !seen[l.Original] {
			seen[l.Original] = true
			urls = append(urls, l.Original)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(urls)
	look := func(db *recentdb.DB) []recentdb.Entry {
		es, err := db.Lookup(ctx, urls)
		if err != nil {
			t.Fatal(err)
		}
		return es
	}
	w, fi, fw := look(written), look(fromIndex), look(fromWARCs)
	compared := 0
	for i, u := range urls {
		if w[i].Capture == nil {
			t.Errorf("%s: in the index but the cdxwriter wrote no capture", u)
			continue
		}
		want := view(w[i])
		if got := view(fi[i]); got != want {
			t.Errorf("%s from the index:\n got %+v\nwant %+v", u, got, want)
		}
		if got := view(fw[i]); got != want {
			t.Errorf("%s from the WARCs:\n got %+v\nwant %+v", u, got, want)
		}
		compared++
	}
	t.Logf("%d URLs compared", compared)
}

func fmtAny(v any) string { return fmt.Sprintf("%+v", v) }

// The line of a 304 capture, which points at the original it confirmed
// (same URL, same record, a later time), rebuilds as a revisit: the
// original keeps its own date, so a later revisit's WARC-Refers-To-Date
// names the record's.
func TestRebuildReadsPointedLineAsRevisit(t *testing.T) {
	ctx := context.Background()
	db, err := recentdb.New(embeddedtest.Redis(t), recentdb.Options{Crawl: "fc", Stream: "npld"})
	if err != nil {
		t.Fatal(err)
	}
	const u = "https://www.example.org/page"
	line := func(ts, file string, off int64) cdx.Line {
		return cdx.Line{URLKey: "org,example)/page", Timestamp: ts, Original: u, Mimetype: "text/html", Status: "200",
			Digest: "AAAA", Length: 500, Offset: off, Filename: file}
	}
	r := statebackup.NewRebuilder(db)
	for _, l := range []cdx.Line{
		line("20260101000000", "A.warc.gz", 100), // the original
		line("20260201000000", "A.warc.gz", 100), // a 304 pointing at it
		line("20260301000000", "A.warc.gz", 100), // another
	} {
		if err := r.Add(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	es, err := db.Lookup(ctx, []string{u})
	if err != nil {
		t.Fatal(err)
	}
	e := es[0]
	if e.Original == nil || e.Original.Time != time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) || e.Original.Offset != 100 {
		t.Errorf("original %+v, want the first line's", e.Original)
	}
	if e.Capture == nil || !e.Capture.Revisit || e.Capture.Time != time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) {
		t.Errorf("capture %+v, want the last line's, a revisit", e.Capture)
	}

	// A new record of the URL at a later time is an original again.
	r = statebackup.NewRebuilder(db)
	for _, l := range []cdx.Line{line("20260101000000", "A.warc.gz", 100), line("20260401000000", "B.warc.gz", 7)} {
		if err := r.Add(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if es, _ = db.Lookup(ctx, []string{u}); es[0].Original == nil || es[0].Original.Filename != "B.warc.gz" || es[0].Capture.Revisit {
		t.Errorf("after a new record: %+v %+v", es[0].Capture, es[0].Original)
	}
}
