package cdxforward

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/testwait"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeOutback imitates OutbackCDX's POST /<collection>: it parses every
// line as CDX11, answers 400 "At line: ..." for a bad one, and otherwise
// "Added N records". fail, when set, decides per request whether to answer
// with an error status instead (0: answer normally; -1: drop the
// connection).
type fakeOutback struct {
	mu       sync.Mutex
	lines    []string
	requests int
	fail     func(n int) int
	block    chan struct{} // when not nil, each POST waits for a receive
	srv      *httptest.Server
}

func newFake(t *testing.T) *fakeOutback {
	f := &fakeOutback{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOutback) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/fc" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusMethodNotAllowed)
		return
	}
	if f.block != nil {
		<-f.block
	}
	f.mu.Lock()
	f.requests++
	n := f.requests
	f.mu.Unlock()
	if f.fail != nil {
		switch code := f.fail(n); {
		case code == -1:
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
			return
		case code > 0:
			http.Error(w, "injected failure", code)
			return
		}
	}
	var got []string
	sc := bufio.NewScanner(r.Body)
	for sc.Scan() {
		if _, err := cdx.ParseCDX11(sc.Text()); err != nil {
			http.Error(w, "At line: "+sc.Text()+"\njava.lang.NumberFormatException ...", http.StatusBadRequest)
			return
		}
		got = append(got, sc.Text())
	}
	f.mu.Lock()
	f.lines = append(f.lines, got...)
	f.mu.Unlock()
	fmt.Fprintf(w, "Added %d records\n", len(got))
}

func (f *fakeOutback) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.lines...)
}

func testLines(n int, prefix string) []cdx.Line {
	out := make([]cdx.Line, n)
	for i := range out {
		out[i] = cdx.Line{URLKey: fmt.Sprintf("org,example)/%s/%d", prefix, i), Timestamp: "20240117090002",
			Original: fmt.Sprintf("http://example.org/%s/%d", prefix, i), Mimetype: "text/html", Status: "200",
			Digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", Length: 100, Offset: int64(i), Filename: "a.warc.gz"}
	}
	return out
}

// start builds a forwarder on the fake and runs it until the test ends.
func start(t *testing.T, f *fakeOutback, o Options) (*Forwarder, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	o.URL, o.Collection, o.Registerer = f.srv.URL+"/", "fc", reg
	if o.MinBackoff == 0 {
		o.MinBackoff, o.MaxBackoff = 5*time.Millisecond, 20*time.Millisecond
	}
	fw, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fw.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return fw, reg
}

func wantLines(t *testing.T, got []string, want []cdx.Line) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("received %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i].CDX11() {
			t.Fatalf("line %d: %q, want %q", i, got[i], want[i].CDX11())
		}
	}
}

func TestForwardBatches(t *testing.T) {
	f := newFake(t)
	fw, reg := start(t, f, Options{BatchLines: 1000})
	lines := testLines(2500, "a")
	if err := fw.Forward(context.Background(), lines); err != nil {
		t.Fatal(err)
	}
	wantLines(t, f.received(), lines)
	if f.requests != 3 {
		t.Errorf("%d POSTs for 2500 lines in batches of 1000, want 3", f.requests)
	}
	if got := metric(t, reg, "trawler_cdxforward_lines_total"); got != 2500 {
		t.Errorf("lines metric %v", got)
	}
	if err := fw.Forward(context.Background(), nil); err != nil {
		t.Errorf("empty Forward: %v", err)
	}
}

// The server fails (5xx, 429, dropped connections), then recovers: every
// line arrives, nothing twice beyond what OutbackCDX tolerates.
func TestForwardRetriesUntilRecovery(t *testing.T) {
	f := newFake(t)
	f.fail = func(n int) int {
		switch n {
		case 1:
			return http.StatusServiceUnavailable
		case 2:
			return -1
		case 3:
			return http.StatusTooManyRequests
		case 4:
			return http.StatusBadGateway
		}
		return 0
	}
	fw, reg := start(t, f, Options{BatchLines: 100})
	lines := testLines(150, "r")
	if err := fw.Forward(context.Background(), lines); err != nil {
		t.Fatal(err)
	}
	wantLines(t, f.received(), lines)
	if got := metric(t, reg, "trawler_cdxforward_retries_total"); got != 4 {
		t.Errorf("retries %v, want 4", got)
	}
	if got := metric(t, reg, "trawler_cdxforward_failing"); got != 0 {
		t.Errorf("failing gauge %v after recovery", got)
	}
}

func TestForwardPermanentFailures(t *testing.T) {
	cases := []struct {
		name    string
		fail    func(int) int
		lines   []cdx.Line
		retry   time.Duration
		wantErr string
	}{
		{name: "bad line is a 400 naming it", lines: append(testLines(3, "ok"), cdx.Line{URLKey: "k", Timestamp: "2024",
			Original: "http://x/", Status: "abc", Offset: 1}),
			wantErr: "400 Bad Request: At line: k 2024 http://x/ - abc"},
		{name: "403 from a secondary", fail: func(int) int { return http.StatusForbidden }, lines: testLines(2, "s"),
			wantErr: "403 Forbidden"},
		{name: "server down longer than RetryFor", fail: func(int) int { return http.StatusServiceUnavailable },
			lines: testLines(2, "d"), retry: 100 * time.Millisecond, wantErr: "503 Service Unavailable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.fail = tc.fail
			fw, reg := start(t, f, Options{RetryFor: tc.retry})
			err := fw.Forward(context.Background(), tc.lines)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if got := metric(t, reg, "trawler_cdxforward_failures_total"); got != 1 {
				t.Errorf("failures %v", got)
			}
			if got := metric(t, reg, "trawler_cdxforward_failing"); got != 1 {
				t.Errorf("failing gauge %v", got)
			}
		})
	}
}

// An answer that added fewer lines than sent is an error, not a success.
func TestForwardShortCount(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "Added 1 records\n")
	}))
	t.Cleanup(srv.Close)
	fw, err := New(Options{URL: srv.URL, Collection: "fc"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fw.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	err = fw.Forward(context.Background(), testLines(2, "c"))
	if err == nil || !strings.Contains(err.Error(), "added 1 of 2 lines") {
		t.Fatalf("err %v", err)
	}
}

// While OutbackCDX hangs, the bounded queue fills and Forward blocks
// (backpressure) instead of dropping lines; once it answers, everything
// queued arrives.
func TestForwardBackpressure(t *testing.T) {
	f := newFake(t)
	f.block = make(chan struct{})
	fw, reg := start(t, f, Options{BatchLines: 10, QueueLines: 20})
	var wg sync.WaitGroup
	var forwarded atomic.Int64
	// 1 batch in flight + 2 queued chunks fill the forwarder.
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fw.Forward(context.Background(), testLines(10, fmt.Sprint("b", i))); err != nil {
				t.Errorf("Forward %d: %v", i, err)
			}
			forwarded.Add(10)
		}()
	}
	testwait.Until(t, 10*time.Second, "the condition", func() bool { return metric(t, reg, "trawler_cdxforward_queued_lines") == 30 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := fw.Forward(ctx, testLines(10, "late"))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "full") {
		t.Fatalf("Forward on a full queue: %v, want it to block until its context ended", err)
	}
	if forwarded.Load() != 0 {
		t.Fatal("a Forward returned before its lines were accepted")
	}
	close(f.block)
	wg.Wait()
	if got := len(f.received()); got != 30 {
		t.Fatalf("received %d lines, want 30", got)
	}
}

func TestForwardAfterStop(t *testing.T) {
	f := newFake(t)
	fw, err := New(Options{URL: f.srv.URL, Collection: "fc"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := fw.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := fw.Run(context.Background()); err == nil {
		t.Error("second Run accepted")
	}
	if err := fw.Forward(context.Background(), testLines(1, "x")); !errors.Is(err, ErrStopped) {
		t.Errorf("Forward after stop: %v", err)
	}
}

func TestNewBadOptions(t *testing.T) {
	cases := []struct {
		o       Options
		wantErr string
	}{
		{Options{URL: "", Collection: "fc"}, "want http(s)://host"},
		{Options{URL: "ftp://x", Collection: "fc"}, "want http(s)://host"},
		{Options{URL: "http://x/?a=1", Collection: "fc"}, "no query"},
		{Options{URL: "http://x", Collection: ""}, "collection"},
		{Options{URL: "http://x", Collection: "a/b"}, "collection"},
		{Options{URL: "http://x", Collection: "fc", BatchLines: -1}, "negative"},
		{Options{URL: "http://[::1", Collection: "fc"}, "URL"},
	}
	for _, tc := range cases {
		if _, err := New(tc.o); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%+v: err %v, want %q", tc.o, err, tc.wantErr)
		}
	}
	fw, err := New(Options{URL: "http://outback:8080/base/", Collection: "fc"})
	if err != nil || fw.Endpoint() != "http://outback:8080/base/fc" {
		t.Errorf("endpoint %v %v", fw, err)
	}
}

func TestJitter(t *testing.T) {
	for range 1000 {
		if d := jitter(time.Second); d < 500*time.Millisecond || d >= time.Second {
			t.Fatalf("jitter(1s) = %s", d)
		}
	}
	if jitter(1) != 1 {
		t.Error("jitter(1ns)")
	}
}

// metric sums the counter and gauge values of the named metric.
func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				v += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return v
}
