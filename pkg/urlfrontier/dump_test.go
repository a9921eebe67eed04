package urlfrontier

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

func (e *env) list(p *pb.ListUrlParams) []string {
	e.t.Helper()
	st, err := e.c.ListURLs(e.ctx, p)
	if err != nil {
		e.t.Fatal(err)
	}
	var urls []string
	for {
		it, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return urls
		}
		if err != nil {
			e.t.Fatal(err)
		}
		urls = append(urls, it.GetKnown().GetInfo().GetUrl())
	}
}

func ptr[T any](v T) *T { return &v }

func TestStatsAndDump(t *testing.T) {
	e := newEnv(t)
	e.mustPut(pb.AckMessage_OK,
		discovered("https://a.example/1", ""), discovered("https://a.example/2", ""), discovered("https://a.example/3", ""),
		discovered("https://b.example/Page", ""))
	served := e.get(&pb.GetParams{Key: "a.example", MaxUrlsPerQueue: 2})
	if !same(served, []string{"https://a.example/1", "https://a.example/2"}) {
		t.Fatalf("served %v", served)
	}
	// 1 done, 2 in flight, scheduled again in an hour.
	later := e.ck.now().Add(time.Hour)
	e.mustPut(pb.AckMessage_OK, known(served[0], "", time.Time{}), known(served[1], "", later))

	st, err := e.c.GetStats(e.ctx, &pb.QueueWithinCrawlParams{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetSize() != 2 || st.GetInProcess() != 0 || st.GetNumberOfQueues() != 2 ||
		st.GetCounts()["completed"] != 2 || st.GetCounts()["scheduled"] != 1 || st.GetCrawlID() != DefaultCrawl {
		t.Fatalf("stats %v", st)
	}
	qs, err := e.c.GetStats(e.ctx, &pb.QueueWithinCrawlParams{Key: "a.example"})
	if err != nil || qs.GetSize() != 1 || qs.GetCounts()["completed"] != 2 {
		t.Fatalf("queue stats %v, %v", qs, err)
	}

	// Dump: queue by queue, then the scheduled URL.
	all := e.list(&pb.ListUrlParams{})
	want := []string{"https://a.example/3", "https://b.example/Page", "https://a.example/2"}
	if !same(all, want) {
		t.Fatalf("ListURLs %v, want %v", all, want)
	}
	if got := e.list(&pb.ListUrlParams{Start: 1, Size: 1}); !same(got, want[1:2]) {
		t.Fatalf("page start 1 size 1: %v", got)
	}
	if got := e.list(&pb.ListUrlParams{Key: "a.example"}); !same(got, []string{"https://a.example/3", "https://a.example/2"}) {
		t.Fatalf("queue a.example: %v", got)
	}
	if got := e.list(&pb.ListUrlParams{Filter: ptr("page")}); len(got) != 0 {
		t.Fatalf("case-sensitive filter matched %v", got)
	}
	if got := e.list(&pb.ListUrlParams{Filter: ptr("page"), IgnoreCase: ptr(true)}); !same(got, []string{"https://b.example/Page"}) {
		t.Fatalf("case-insensitive filter: %v", got)
	}
	if n, err := e.c.CountURLs(e.ctx, &pb.CountUrlParams{Filter: ptr("a.example")}); err != nil || n.GetValue() != 2 {
		t.Fatalf("count %v, %v", n, err)
	}

	status := func(u string) uint64 {
		t.Helper()
		it, err := e.c.GetURLStatus(e.ctx, &pb.URLStatusRequest{Url: u})
		if err != nil || it.GetKnown() == nil {
			t.Fatalf("status of %s: %v, %v", u, it, err)
		}
		return it.GetKnown().GetRefetchableFromDate()
	}
	if d := status("https://a.example/1"); d != 0 {
		t.Fatalf("done URL dated %d", d)
	}
	if d := status("https://a.example/2"); d != uint64(later.Unix()) {
		t.Fatalf("scheduled URL dated %d, want %d", d, later.Unix())
	}
	if d := status("https://a.example/3"); d < uint64(e.ck.now().Unix()) {
		t.Fatalf("queued URL dated %d", d)
	}

	ql, err := e.c.ListQueues(e.ctx, &pb.Pagination{})
	if err != nil || !same(ql.GetValues(), []string{"a.example", "b.example"}) || ql.GetTotal() != 2 {
		t.Fatalf("queues %v, %v", ql, err)
	}
	e.get(&pb.GetParams{Key: "b.example"})
	e.mustPut(pb.AckMessage_OK, known("https://b.example/Page", "", time.Time{}))
	if ql, _ := e.c.ListQueues(e.ctx, &pb.Pagination{}); !same(ql.GetValues(), []string{"a.example"}) {
		t.Fatalf("active queues %v: b.example is done", ql.GetValues())
	}
	if ql, _ := e.c.ListQueues(e.ctx, &pb.Pagination{IncludeInactive: true, Start: 1}); !same(ql.GetValues(), []string{"b.example"}) {
		t.Fatalf("all queues from 1: %v", ql.GetValues())
	}

	n, err := e.c.DeleteQueue(e.ctx, &pb.QueueWithinCrawlParams{Key: "a.example"})
	if err != nil || n.GetValue() != 2 {
		t.Fatalf("DeleteQueue: %v, %v: want the queued and the scheduled URL", n, err)
	}
	if got := e.list(&pb.ListUrlParams{}); len(got) != 0 {
		t.Fatalf("after DeleteQueue: %v", got)
	}
	e.ck.add(2 * time.Hour)
	if got := e.get(&pb.GetParams{}); len(got) != 0 {
		t.Fatalf("served %v after DeleteQueue", got)
	}
}

func TestNodeCalls(t *testing.T) {
	e := newEnv(t)
	nodes, err := e.c.ListNodes(e.ctx, &pb.Empty{})
	if err != nil || !same(nodes.GetValues(), []string{"test-node"}) {
		t.Fatalf("nodes %v, %v", nodes, err)
	}
	var lv slog.LevelVar
	srv, err := New(e.rdb, Config{Frontier: "uf2", Insecure: true, Level: &lv})
	if err != nil {
		t.Fatal(err)
	}
	e2 := serveEnv(t, srv, e.rdb, e.ck)
	if _, err := e2.c.SetLogLevel(e2.ctx, &pb.LogLevelParams{Level: pb.LogLevelParams_DEBUG}); err != nil {
		t.Fatal(err)
	}
	if lv.Level() != slog.LevelDebug {
		t.Fatalf("level %v after SetLogLevel(DEBUG)", lv.Level())
	}
}
