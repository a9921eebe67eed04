package urlfrontier

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/profile"
	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

const testToken = "s3cret-token"

// clock is a settable test clock: leases, delays, blocks and refetch
// dates are tested by moving it, never by sleeping.
type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *clock) add(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// env is a served URLFrontier on a real redis-server, and a client on a
// real loopback TCP connection.
type env struct {
	t   *testing.T
	c   pb.URLFrontierClient
	ck  *clock
	rdb *redis.Client
	reg *prometheus.Registry
	ctx context.Context // carries the token
}

func newEnv(t *testing.T) *env { t.Helper(); return newEnvWith(t, frontier.Options{}) }

// newEnvWith serves crawls opened with the given frontier options.
func newEnvWith(t *testing.T, o frontier.Options) *env {
	t.Helper()
	rdb := embeddedtest.Redis(t)
	ck := &clock{}
	ck.ms.Store(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC).UnixMilli())
	p := profile.Default()
	reg := prometheus.NewRegistry()
	srv, err := New(rdb, Config{Frontier: "uf", Token: testToken, Node: "test-node", Now: ck.now, Policy: frontier.PolicyOf(p), Registerer: reg, Options: o})
	if err != nil {
		t.Fatal(err)
	}
	e := serveEnv(t, srv, rdb, ck)
	e.reg = reg
	return e
}

func serveEnv(t *testing.T, srv *Server, rdb *redis.Client, ck *clock) *env {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+testToken)
	return &env{t: t, c: pb.NewURLFrontierClient(conn), ck: ck, rdb: rdb, ctx: ctx}
}

func info(url, crawl string) *pb.URLInfo { return &pb.URLInfo{Url: url, CrawlID: crawl} }

func discovered(url, crawl string) *pb.URLItem {
	return &pb.URLItem{ID: url, Item: &pb.URLItem_Discovered{Discovered: &pb.DiscoveredURLItem{Info: info(url, crawl)}}}
}

func known(url, crawl string, date time.Time) *pb.URLItem {
	var d uint64
	if !date.IsZero() {
		d = uint64(date.Unix())
	}
	return &pb.URLItem{ID: url, Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{Info: info(url, crawl), RefetchableFromDate: d}}}
}

// put sends items on one PutURLs stream and returns the acks and the
// stream's final status.
func (e *env) put(items ...*pb.URLItem) ([]*pb.AckMessage, error) {
	e.t.Helper()
	st, err := e.c.PutURLs(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, it := range items {
		if err := st.Send(it); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := st.CloseSend(); err != nil {
		e.t.Fatal(err)
	}
	var acks []*pb.AckMessage
	for {
		a, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return acks, nil
		}
		if err != nil {
			return acks, err
		}
		acks = append(acks, a)
	}
}

// mustPut puts items and wants every ack to be want.
func (e *env) mustPut(want pb.AckMessage_Status, items ...*pb.URLItem) {
	e.t.Helper()
	acks, err := e.put(items...)
	if err != nil {
		e.t.Fatalf("put: %v", err)
	}
	if len(acks) != len(items) {
		e.t.Fatalf("%d acks for %d items", len(acks), len(items))
	}
	for i, a := range acks {
		if a.GetStatus() != want {
			e.t.Fatalf("ack %d (%s): %v, want %v", i, a.GetID(), a.GetStatus(), want)
		}
	}
}

// get runs GetURLs and returns the URLs served, in order.
func (e *env) get(p *pb.GetParams) []string {
	e.t.Helper()
	urls, err := e.tryGet(p)
	if err != nil {
		e.t.Fatalf("GetURLs: %v", err)
	}
	return urls
}

func (e *env) tryGet(p *pb.GetParams) ([]string, error) {
	st, err := e.c.GetURLs(e.ctx, p)
	if err != nil {
		return nil, err
	}
	var urls []string
	for {
		u, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return urls, nil
		}
		if err != nil {
			return urls, err
		}
		urls = append(urls, u.GetUrl())
	}
}

func wantCode(t *testing.T, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("error %v: want code %v", err, code)
	}
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
