package urlfrontier

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/trawler-crawl/trawler/internal/metricstest"
	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

// A stream with bad items in it: each is acked SKIPPED, the good ones
// around it are taken, and the final status is InvalidArgument naming
// each bad item's position and reason.
func TestPutURLsBadItemsAreSkippedAndNamed(t *testing.T) {
	e := newEnv(t)
	huge := &pb.URLItem{ID: "huge", Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{
		Info: info("https://a.example/h", ""), RefetchableFromDate: ^uint64(0)}}}
	otherKey := discovered("https://a.example/k", "")
	otherKey.GetDiscovered().Info.Key = "my-queue"
	items := []*pb.URLItem{
		discovered("https://a.example/good1", ""),
		discovered("", ""),
		discovered("http://[::1", ""),
		discovered("ftp://a.example/x", ""),
		discovered("https://a.example/badcrawl", "no such/crawl"),
		huge,
		{ID: "empty"},
		otherKey,
		discovered("https://a.example/good2", ""),
	}
	acks, err := e.put(items...)
	if len(acks) != len(items) {
		t.Fatalf("%d acks for %d items (err %v)", len(acks), len(items), err)
	}
	want := []pb.AckMessage_Status{0, 1, 1, 1, 1, 1, 1, 1, 0}
	for i, a := range acks {
		if a.GetStatus() != want[i] {
			t.Errorf("item %d: ack %v, want %v", i, a.GetStatus(), want[i])
		}
	}
	wantCode(t, err, codes.InvalidArgument)
	msg := status.Convert(err).Message()
	for _, part := range []string{
		"7 items refused", "item 1 (ID \"\"): empty URL", "item 2", "item 3", "want an absolute http or https URL",
		"item 4", "crawl id \"no such/crawl\"", "item 5 (ID \"huge\"): refetchable_from_date", "item 6 (ID \"empty\"): item is neither",
		"item 7", "queue key \"my-queue\"",
	} {
		if !strings.Contains(msg, part) {
			t.Errorf("final status %q lacks %q", msg, part)
		}
	}
	n, err := e.c.CountURLs(e.ctx, &pb.CountUrlParams{})
	if err != nil || n.GetValue() != 2 {
		t.Fatalf("count %v, %v: want the 2 good URLs", n, err)
	}
	for _, m := range []struct {
		name   string
		labels []string // values, in label-name order
		want   float64
	}{
		{"trawler_urlfrontier_refused_items_total", []string{"InvalidArgument"}, 6},
		{"trawler_urlfrontier_refused_items_total", []string{"Unimplemented"}, 1},
		{"trawler_urlfrontier_put_urls_total", []string{"ok"}, 2},
		{"trawler_urlfrontier_put_urls_total", []string{"skipped"}, 7},
		{"trawler_urlfrontier_calls_total", []string{"InvalidArgument", "/urlfrontier.URLFrontier/PutURLs"}, 1},
	} {
		if got := metricstest.Value(t, e.reg, m.name, m.labels...); got != m.want {
			t.Errorf("%s%v = %v, want %v", m.name, m.labels, got, m.want)
		}
	}
}

func TestPutDiscoveredBatches(t *testing.T) {
	e := newEnv(t)
	st, err := e.c.PutDiscovered(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	batches := []*pb.DiscoveredBatch{
		{ID: "b1", Items: []*pb.URLInfo{info("https://a.example/1", ""), info("https://a.example/2", ""), info("", "")}},
		{ID: "b2", Items: []*pb.URLInfo{info("https://a.example/1", ""), info("https://b.example/1", "X")}},
	}
	for _, b := range batches {
		if err := st.Send(b); err != nil {
			t.Fatal(err)
		}
	}
	_ = st.CloseSend()
	want := map[string][]pb.AckMessage_Status{"b1": {0, 0, 1}, "b2": {1, 0}}
	for range batches {
		a, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if w := want[a.GetID()]; len(w) != len(a.GetStatuses()) {
			t.Fatalf("batch %s: statuses %v, want %v", a.GetID(), a.GetStatuses(), w)
		}
		for i, s := range a.GetStatuses() {
			if s != want[a.GetID()][i] {
				t.Errorf("batch %s item %d: %v, want %v", a.GetID(), i, s, want[a.GetID()][i])
			}
		}
	}
	_, err = st.Recv()
	wantCode(t, err, codes.InvalidArgument)
	if !strings.Contains(status.Convert(err).Message(), "item 2 (ID \"b1\"): empty URL") {
		t.Fatalf("final status %v", err)
	}
}

func TestBadRequests(t *testing.T) {
	e := newEnv(t)
	e.mustPut(pb.AckMessage_OK, discovered("https://a.example/1", "known"))
	cases := []struct {
		name string
		call func() error
		code codes.Code
		msg  string
	}{
		{"unknown crawl", func() error {
			_, err := e.tryGet(&pb.GetParams{Item: &pb.GetParams_CrawlID{CrawlID: "nope"}})
			return err
		},
			codes.InvalidArgument, "crawl \"nope\" is unknown"},
		{"bad crawl id", func() error { _, err := e.c.GetStats(e.ctx, &pb.QueueWithinCrawlParams{CrawlID: "{x}"}); return err },
			codes.InvalidArgument, "crawl id \"{x}\""},
		{"unknown queue", func() error {
			_, err := e.c.GetStats(e.ctx, &pb.QueueWithinCrawlParams{CrawlID: "known", Key: "z.example"})
			return err
		}, codes.InvalidArgument, "queue \"z.example\" is unknown"},
		{"status of empty URL", func() error { _, err := e.c.GetURLStatus(e.ctx, &pb.URLStatusRequest{CrawlID: "known"}); return err },
			codes.InvalidArgument, "empty URL"},
		{"status of unknown URL", func() error {
			_, err := e.c.GetURLStatus(e.ctx, &pb.URLStatusRequest{CrawlID: "known", Url: "https://a.example/2"})
			return err
		}, codes.NotFound, "not in crawl known"},
		{"block without key", func() error { _, err := e.c.BlockQueueUntil(e.ctx, &pb.BlockQueueParams{Time: 1}); return err },
			codes.InvalidArgument, "needs a queue key"},
		{"block far past 9999", func() error {
			_, err := e.c.BlockQueueUntil(e.ctx, &pb.BlockQueueParams{Key: "a.example", Time: ^uint64(0)})
			return err
		}, codes.InvalidArgument, "past year 9999"},
		{"limit without key", func() error { _, err := e.c.SetCrawlLimit(e.ctx, &pb.CrawlLimitParams{Limit: 1}); return err },
			codes.InvalidArgument, "needs a queue key"},
		{"delete queue without key", func() error { _, err := e.c.DeleteQueue(e.ctx, &pb.QueueWithinCrawlParams{}); return err },
			codes.InvalidArgument, "needs a queue key"},
		{"bad log level", func() error { _, err := e.c.SetLogLevel(e.ctx, &pb.LogLevelParams{Level: 9}); return err },
			codes.InvalidArgument, "log level 9"},
		{"purge", func() error { _, err := e.c.PurgeURLs(e.ctx, &pb.PurgeUrlParams{Days: 1}); return err },
			codes.Unimplemented, "no creation date"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			wantCode(t, err, tc.code)
			if !strings.Contains(status.Convert(err).Message(), tc.msg) {
				t.Fatalf("message %q lacks %q", status.Convert(err).Message(), tc.msg)
			}
		})
	}
}

func TestTokenIsRequired(t *testing.T) {
	e := newEnv(t)
	for name, ctx := range map[string]func() error{
		"none": func() error { _, err := e.c.GetActive(t.Context(), &pb.Local{}); return err },
		"wrong": func() error {
			_, err := e.c.GetActive(metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer nope"), &pb.Local{})
			return err
		},
		"stream": func() error { _, err := e.tryGet2(t); return err },
	} {
		t.Run(name, func(t *testing.T) { wantCode(t, ctx(), codes.Unauthenticated) })
	}
	if _, err := e.c.GetActive(e.ctx, &pb.Local{}); err != nil {
		t.Fatalf("with the token: %v", err)
	}
	if _, err := New(e.rdb, Config{Frontier: "uf"}); err == nil {
		t.Fatal("a server without a token and not insecure was built")
	}
}

// tryGet2 runs GetURLs without the token.
func (e *env) tryGet2(t *testing.T) ([]string, error) {
	st, err := e.c.GetURLs(t.Context(), &pb.GetParams{})
	if err != nil {
		return nil, err
	}
	_, err = st.Recv()
	return nil, err
}
