package statebackup

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/embedded"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/rdbsync"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// testToken guards the test index's POSTs, as the admin token does.
const testToken = "s3cret"

// crawlEnv is a running crawl's state without the crawl: a real
// redis-server with a frontier holding queued and leased URIs, a Pebble
// index served over HTTP, and a broker.
type crawlEnv struct {
	redisAddr string
	rdb       *redis.Client
	f         *frontier.Frontier
	ix        *cdxindex.Index
	cdxURL    string
	adm       *kadm.Client
}

func startRedisServer(t *testing.T, dir string) (*embedded.Redis, *redis.Client) {
	t.Helper()
	return embeddedtest.RedisServer(t, dir)
}

func newCrawlEnv(t *testing.T, queued, leased int) *crawlEnv {
	t.Helper()
	r, rdb := startRedisServer(t, t.TempDir())
	f, err := frontier.New(rdb, "fc-npld", frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	queueURIs(t, f, queued, leased)
	ix, cdxURL := serveIndex(t, 500)
	_, kc := embeddedtest.Kafka(t, 2)
	return &crawlEnv{redisAddr: r.Addr(), rdb: rdb, f: f, ix: ix, cdxURL: cdxURL, adm: kadm.NewClient(kc)}
}

// queueURIs admits n seeds over 7 hosts and leases leased of them for an
// hour (in flight at a backup).
func queueURIs(t *testing.T, f *frontier.Frontier, n, leased int) {
	t.Helper()
	ctx := context.Background()
	pol := frontier.PolicyOf(profile.Default())
	pol.Politeness = profile.Politeness{}
	var cs []frontier.Candidate
	for i := range n {
		host := fmt.Sprintf("h%d.example", i%7)
		cs = append(cs, frontier.Candidate{Policy: pol, Launch: messages.Launch{
			URL: fmt.Sprintf("http://%s/p%d", host, i), IsSeed: true,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:http://" + host + "/"}}}})
	}
	if n > 0 {
		if _, err := f.Admit(ctx, cs); err != nil {
			t.Fatal(err)
		}
	}
	if leased > 0 {
		if cl, _, err := f.Claim(ctx, leased, time.Hour); err != nil || len(cl) != leased {
			t.Fatalf("claim %d: %d, %v", leased, len(cl), err)
		}
	}
}

// putRecent records n captures (http://example.org/<i>) in the
// recently-crawled DB of fc-npld.
func putRecent(t *testing.T, rdb redis.UniversalClient, n int) {
	t.Helper()
	db, err := recentdb.New(rdb, recentdb.Options{Crawl: "fc", Stream: "npld"})
	if err != nil {
		t.Fatal(err)
	}
	var ups []recentdb.Update
	for i := range n {
		ups = append(ups, recentdb.Update{URL: fmt.Sprintf("http://example.org/%d", i),
			Capture: &recentdb.Capture{Time: time.Now().UTC().Truncate(time.Millisecond), Status: 200, Length: -1}})
	}
	if err := db.Put(context.Background(), ups); err != nil {
		t.Fatal(err)
	}
}

// serveIndex is a Pebble index of n captures in collection fc, served
// over HTTP behind testToken.
func serveIndex(t *testing.T, n int) (*cdxindex.Index, string) {
	t.Helper()
	ix, err := cdxindex.Open(filepath.Join(t.TempDir(), "index"), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	var lines []cdx.Line
	for i := range n {
		lines = append(lines, cdx.Line{Original: fmt.Sprintf("http://h%d.example/done%d", i%7, i), Timestamp: "20261125101010",
			Mimetype: "text/html", Status: "200", Digest: "AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH", Length: 100, Offset: int64(i) * 100, Filename: "a.warc.gz"})
	}
	if err := ix.Put(context.Background(), "fc", lines); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ix.Handler(cdxindex.HandlerOptions{Tokens: admin.Tokens{Operator: admin.StaticToken(testToken)}}))
	t.Cleanup(srv.Close)
	return ix, srv.URL
}

// options are backup options for the environment.
func (e *crawlEnv) options(out string) BackupOptions {
	return BackupOptions{Out: out, Masters: []rdbsync.Options{{Addr: e.redisAddr}}, Redis: e.rdb,
		Frontiers: []*frontier.Frontier{e.f}, Kafka: e.adm,
		Groups:       []GroupTopic{{Group: "trawler-cdxwriter-fc", Topic: "fc.crawled", Index: true}},
		DrainTimeout: 300 * time.Millisecond, CDXURL: e.cdxURL, CDXToken: testToken, Version: "test"}
}
