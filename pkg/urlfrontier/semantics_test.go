package urlfrontier

import (
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/metricstest"
	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

// The semantics crawler-commons' URLFrontier service tests check, run
// through a gRPC client against the served Trawler frontier.

func TestKnownWithoutDateIsNeverServedAgain(t *testing.T) {
	e := newEnv(t)
	const u = "https://a.example/page"
	e.mustPut(pb.AckMessage_OK, discovered(u, ""))
	if got := e.get(&pb.GetParams{DelayRequestable: 10}); !same(got, []string{u}) {
		t.Fatalf("served %v, want %s", got, u)
	}
	e.mustPut(pb.AckMessage_OK, known(u, "", time.Time{}))
	// Past the lease and any delay: still never served again.
	e.ck.add(time.Hour)
	if got := e.get(&pb.GetParams{}); len(got) != 0 {
		t.Fatalf("served %v after completion without a date", got)
	}
	// A discovery of it again is skipped, not queued.
	e.mustPut(pb.AckMessage_SKIPPED, discovered(u, ""))
	e.ck.add(time.Hour)
	if got := e.get(&pb.GetParams{}); len(got) != 0 {
		t.Fatalf("served %v after a rediscovery", got)
	}
	item, err := e.c.GetURLStatus(e.ctx, &pb.URLStatusRequest{Url: u})
	if err != nil {
		t.Fatal(err)
	}
	if item.GetKnown() == nil || item.GetKnown().GetRefetchableFromDate() != 0 {
		t.Fatalf("status %v: want known with date 0", item)
	}
}

func TestKnownServedAgainInRefetchDateOrder(t *testing.T) {
	e := newEnv(t)
	urls := []string{"https://a.example/1", "https://a.example/2", "https://a.example/3"}
	for _, u := range urls {
		e.mustPut(pb.AckMessage_OK, discovered(u, ""))
	}
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 3}); !same(got, urls) {
		t.Fatalf("served %v, want %v", got, urls)
	}
	now := e.ck.now()
	// Dates in another order than the URLs: 1 last, 2 first.
	e.mustPut(pb.AckMessage_OK,
		known(urls[0], "", now.Add(30*time.Second)),
		known(urls[1], "", now.Add(10*time.Second)),
		known(urls[2], "", now.Add(20*time.Second)))
	e.ck.add(5 * time.Second)
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 3}); len(got) != 0 {
		t.Fatalf("served %v before any refetch date", got)
	}
	e.ck.add(15 * time.Second) // +20 s: 2 and 3 are due
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 3}); !same(got, []string{urls[1], urls[2]}) {
		t.Fatalf("served %v at +20 s, want %v", got, []string{urls[1], urls[2]})
	}
	e.mustPut(pb.AckMessage_OK, known(urls[1], "", time.Time{}), known(urls[2], "", time.Time{}))
	e.ck.add(15 * time.Second)
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 3}); !same(got, []string{urls[0]}) {
		t.Fatalf("served %v at +35 s, want %v", got, urls[:1])
	}
}

func TestRefetchDatesOrderAcrossAWait(t *testing.T) {
	e := newEnv(t)
	urls := []string{"https://b.example/x", "https://b.example/y", "https://b.example/z"}
	for _, u := range urls {
		e.mustPut(pb.AckMessage_OK, discovered(u, ""))
	}
	e.get(&pb.GetParams{MaxUrlsPerQueue: 3})
	now := e.ck.now()
	e.mustPut(pb.AckMessage_OK,
		known(urls[0], "", now.Add(3*time.Minute)),
		known(urls[1], "", now.Add(1*time.Minute)),
		known(urls[2], "", now.Add(2*time.Minute)))
	e.ck.add(time.Hour) // all due: served by date, not by URL or put order
	want := []string{urls[1], urls[2], urls[0]}
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 3}); !same(got, want) {
		t.Fatalf("served %v, want %v", got, want)
	}
}

func TestLeaseHoldsAURLUntilItExpires(t *testing.T) {
	e := newEnv(t)
	const u = "https://a.example/leased"
	e.mustPut(pb.AckMessage_OK, discovered(u, ""))
	if got := e.get(&pb.GetParams{DelayRequestable: 10}); !same(got, []string{u}) {
		t.Fatalf("served %v", got)
	}
	e.ck.add(9 * time.Second)
	if got := e.get(&pb.GetParams{DelayRequestable: 10}); len(got) != 0 {
		t.Fatalf("served %v while leased", got)
	}
	e.ck.add(2 * time.Second)
	if got := e.get(&pb.GetParams{DelayRequestable: 10}); !same(got, []string{u}) {
		t.Fatalf("served %v after the lease expired, want %s", got, u)
	}
	if n := metricstest.Value(t, e.reg, "trawler_urlfrontier_served_urls_total"); n != 2 {
		t.Fatalf("served_urls_total %v, want 2", n)
	}
}

func TestDelayBetweenURLsOfAQueue(t *testing.T) {
	e := newEnv(t)
	if _, err := e.c.SetDelay(e.ctx, &pb.QueueDelayParams{Key: "a.example", DelayRequestable: 5}); err != nil {
		t.Fatal(err)
	}
	e.mustPut(pb.AckMessage_OK, discovered("https://a.example/1", ""), discovered("https://a.example/2", ""),
		discovered("https://c.example/1", ""), discovered("https://c.example/2", ""))
	one := &pb.GetParams{MaxUrlsPerQueue: 1}
	got := e.get(one)
	if len(got) != 2 {
		t.Fatalf("served %v, want one URL of each queue", got)
	}
	e.mustPut(pb.AckMessage_OK, known(got[0], "", time.Time{}), known(got[1], "", time.Time{}))
	// c.example has no delay; a.example waits 5 s after its completion.
	if got := e.get(one); !same(got, []string{"https://c.example/2"}) {
		t.Fatalf("served %v at once, want only c.example's", got)
	}
	e.ck.add(4 * time.Second)
	if got := e.get(one); len(got) != 0 {
		t.Fatalf("served %v within a.example's delay", got)
	}
	e.ck.add(time.Second)
	if got := e.get(one); !same(got, []string{"https://a.example/2"}) {
		t.Fatalf("served %v after the delay", got)
	}
}

func TestMaxQueuesAndURLsPerQueue(t *testing.T) {
	e := newEnv(t)
	for _, h := range []string{"a", "b", "c"} {
		for _, p := range []string{"1", "2", "3"} {
			e.mustPut(pb.AckMessage_OK, discovered("https://"+h+".example/"+p, ""))
		}
	}
	got := e.get(&pb.GetParams{MaxQueues: 2, MaxUrlsPerQueue: 2})
	if len(got) != 4 {
		t.Fatalf("served %v, want 2 queues × 2 URLs", got)
	}
	// The key filter serves that queue only: the one not served yet.
	left := map[string]bool{"a.example": true, "b.example": true, "c.example": true}
	for _, u := range got {
		delete(left, strings.Split(u, "/")[2])
	}
	if len(left) != 1 {
		t.Fatalf("served %v: want two queues", got)
	}
	for h := range left {
		rest := e.get(&pb.GetParams{Key: h, MaxUrlsPerQueue: 5})
		want := []string{"https://" + h + "/1", "https://" + h + "/2", "https://" + h + "/3"}
		if !same(rest, want) {
			t.Fatalf("key %s served %v, want %v", h, rest, want)
		}
	}
	if rest := e.get(&pb.GetParams{Key: "a.example", MaxUrlsPerQueue: 5}); len(rest) != 0 {
		t.Fatalf("key a.example served %v while its URLs are in flight", rest)
	}
}

func TestCrawlIDsAreIsolated(t *testing.T) {
	e := newEnv(t)
	e.mustPut(pb.AckMessage_OK, discovered("https://a.example/in-A", "A"), discovered("https://a.example/in-B", "B"))
	// The same URL in two crawls is two URLs.
	e.mustPut(pb.AckMessage_OK, discovered("https://a.example/both", "A"), discovered("https://a.example/both", "B"))
	if got := e.get(&pb.GetParams{Item: &pb.GetParams_CrawlID{CrawlID: "B"}, MaxUrlsPerQueue: 10}); !same(got, []string{"https://a.example/in-B", "https://a.example/both"}) {
		t.Fatalf("crawl B served %v", got)
	}
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 10}); len(got) != 0 {
		t.Fatalf("the default crawl served %v", got)
	}
	cr, err := e.c.ListCrawls(e.ctx, &pb.Local{})
	if err != nil || len(cr.GetValues()) != 2 {
		t.Fatalf("crawls %v, %v: want A and B", cr.GetValues(), err)
	}
	n, err := e.c.DeleteCrawl(e.ctx, &pb.DeleteCrawlMessage{Value: "A"})
	if err != nil || n.GetValue() != 2 {
		t.Fatalf("DeleteCrawl A: %v, %v: want 2 URLs", n, err)
	}
	_, err = e.tryGet(&pb.GetParams{Item: &pb.GetParams_CrawlID{CrawlID: "A"}})
	wantCode(t, err, 3) // InvalidArgument: A is gone
	st, err := e.c.GetStats(e.ctx, &pb.QueueWithinCrawlParams{CrawlID: "B"})
	if err != nil || st.GetInProcess() != 2 {
		t.Fatalf("crawl B after deleting A: %v, %v", st, err)
	}
	// Every crawl at once.
	e.mustPut(pb.AckMessage_OK, discovered("https://z.example/c", "C"))
	if got := e.get(&pb.GetParams{Item: &pb.GetParams_AnyCrawlID{AnyCrawlID: &pb.AnyCrawlID{}}}); !same(got, []string{"https://z.example/c"}) {
		t.Fatalf("any crawl served %v", got)
	}
}

func TestBlockQueueUntil(t *testing.T) {
	e := newEnv(t)
	e.mustPut(pb.AckMessage_OK, discovered("https://a.example/1", ""), discovered("https://a.example/2", ""))
	until := e.ck.now().Add(time.Minute)
	if _, err := e.c.BlockQueueUntil(e.ctx, &pb.BlockQueueParams{Key: "a.example", Time: uint64(until.Unix())}); err != nil {
		t.Fatal(err)
	}
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 1}); len(got) != 0 {
		t.Fatalf("served %v from a blocked queue", got)
	}
	e.ck.add(time.Minute)
	got := e.get(&pb.GetParams{MaxUrlsPerQueue: 1})
	if !same(got, []string{"https://a.example/1"}) {
		t.Fatalf("served %v after the block", got)
	}
	// A block set while a URL is in flight outlasts its completion.
	until = e.ck.now().Add(time.Minute)
	if _, err := e.c.BlockQueueUntil(e.ctx, &pb.BlockQueueParams{Key: "a.example", Time: uint64(until.Unix())}); err != nil {
		t.Fatal(err)
	}
	e.mustPut(pb.AckMessage_OK, known(got[0], "", time.Time{}))
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 1}); len(got) != 0 {
		t.Fatalf("served %v: the completion ended the block", got)
	}
	// 0 unblocks.
	if _, err := e.c.BlockQueueUntil(e.ctx, &pb.BlockQueueParams{Key: "a.example"}); err != nil {
		t.Fatal(err)
	}
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 1}); !same(got, []string{"https://a.example/2"}) {
		t.Fatalf("served %v after unblocking", got)
	}
}

func TestCrawlLimit(t *testing.T) {
	e := newEnv(t)
	if _, err := e.c.SetCrawlLimit(e.ctx, &pb.CrawlLimitParams{Key: "a.example", Limit: 2}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"1", "2", "3", "4"} {
		e.mustPut(pb.AckMessage_OK, discovered("https://a.example/"+p, ""))
	}
	got := e.get(&pb.GetParams{MaxUrlsPerQueue: 10})
	if len(got) != 2 {
		t.Fatalf("served %v under a limit of 2", got)
	}
	e.mustPut(pb.AckMessage_OK, known(got[0], "", time.Time{}), known(got[1], "", time.Time{}))
	e.ck.add(time.Hour)
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 10}); len(got) != 0 {
		t.Fatalf("served %v past the limit", got)
	}
	if _, err := e.c.SetCrawlLimit(e.ctx, &pb.CrawlLimitParams{Key: "a.example", Limit: 3}); err != nil {
		t.Fatal(err)
	}
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 10}); len(got) != 1 {
		t.Fatalf("served %v after raising the limit to 3", got)
	}
}

func TestActive(t *testing.T) {
	e := newEnv(t)
	e.mustPut(pb.AckMessage_OK, discovered("https://a.example/1", ""))
	if _, err := e.c.SetActive(e.ctx, &pb.Active{State: false}); err != nil {
		t.Fatal(err)
	}
	if a, err := e.c.GetActive(e.ctx, &pb.Local{}); err != nil || a.GetState() {
		t.Fatalf("active %v, %v after SetActive(false)", a, err)
	}
	if got := e.get(&pb.GetParams{}); len(got) != 0 {
		t.Fatalf("inactive frontier served %v", got)
	}
	// Puts are still taken.
	e.mustPut(pb.AckMessage_OK, discovered("https://b.example/1", ""))
	if _, err := e.c.SetActive(e.ctx, &pb.Active{State: true}); err != nil {
		t.Fatal(err)
	}
	if got := e.get(&pb.GetParams{}); len(got) != 2 {
		t.Fatalf("active again served %v", got)
	}
}

// Known URLs that GetURLs did not hand out: a queued one is taken from
// its queue, one the crawl never had is recorded (done for good, or
// scheduled: an import of a crawl's state).
func TestKnownURLsNeverServed(t *testing.T) {
	e := newEnv(t)
	e.mustPut(pb.AckMessage_OK, discovered("https://a.example/queued", ""), discovered("https://a.example/other", ""))
	later := e.ck.now().Add(time.Minute)
	e.mustPut(pb.AckMessage_OK,
		known("https://a.example/queued", "", time.Time{}),
		known("https://b.example/imported-done", "", time.Time{}),
		known("https://c.example/imported-later", "", later),
		known("https://d.example/cancelled", "", later),
		known("https://d.example/cancelled", "", time.Time{}))
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 10}); !same(got, []string{"https://a.example/other"}) {
		t.Fatalf("served %v: want only the URL nobody settled", got)
	}
	e.mustPut(pb.AckMessage_OK, known("https://a.example/other", "", time.Time{}))
	e.mustPut(pb.AckMessage_SKIPPED, discovered("https://a.example/queued", ""), discovered("https://b.example/imported-done", ""),
		discovered("https://c.example/imported-later", ""))
	e.ck.add(time.Minute)
	if got := e.get(&pb.GetParams{MaxUrlsPerQueue: 10}); !same(got, []string{"https://c.example/imported-later"}) {
		t.Fatalf("served %v at the imported date", got)
	}
}

// Metadata put with a URL comes back with it from GetURLs, also after a
// refetch date.
func TestMetadataTravels(t *testing.T) {
	e := newEnv(t)
	it := discovered("https://a.example/m", "")
	it.GetDiscovered().Info.Metadata = map[string]*pb.StringList{"depth": {Values: []string{"2"}}, "via": {Values: []string{"x", "y"}}}
	e.mustPut(pb.AckMessage_OK, it)
	check := func() {
		t.Helper()
		st, err := e.c.GetURLs(e.ctx, &pb.GetParams{})
		if err != nil {
			t.Fatal(err)
		}
		u, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		md := u.GetMetadata()
		if len(md) != 2 || md["depth"].GetValues()[0] != "2" || len(md["via"].GetValues()) != 2 || u.GetKey() != "a.example" || u.GetCrawlID() != DefaultCrawl {
			t.Fatalf("served %v", u)
		}
	}
	check()
	k := known("https://a.example/m", "", e.ck.now().Add(time.Second))
	k.GetKnown().Info.Metadata = map[string]*pb.StringList{"depth": {Values: []string{"2"}}, "via": {Values: []string{"x", "z"}}}
	e.mustPut(pb.AckMessage_OK, k)
	e.ck.add(time.Second)
	check()
}
