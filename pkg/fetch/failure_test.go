package fetch

import (
	"context"
	"errors"
	"flag"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/refusedport"
	"github.com/trawler-crawl/trawler/internal/testwait"
)

// dripServer sends headers and then one body byte every interval until the
// client goes away, recording everything it managed to write.
func dripServer(t *testing.T, interval time.Duration, written chan<- []byte) *rawServer {
	return startServer(t, func(ss *session) {
		defer func() { written <- ss.written.Bytes() }()
		if _, err := ss.readRequest(); err != nil {
			return
		}
		if ss.write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")) != nil {
			return
		}
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ss.srv.done:
				return
			case <-tick.C:
				if ss.write([]byte("d")) != nil {
					return
				}
			}
		}
	})
}

func TestTotalTimeoutAfterHeadersTruncates(t *testing.T) {
	written := make(chan []byte, 1)
	srv := dripServer(t, 10*time.Millisecond, written)
	f := newFetcher(t, Config{AllowPrivate: true, TotalTimeout: 300 * time.Millisecond, ReadTimeout: 5 * time.Second})
	resp := fetchOK(t, f, "http://site.test:"+srv.port()+"/slow", nil)
	if len(resp.Annotations) != 1 || resp.Annotations[0] != AnnotationTimeTrunc {
		t.Fatalf("annotations %v, want timeTrunc", resp.Annotations)
	}
	if resp.Duration < 300*time.Millisecond {
		t.Fatalf("duration %v shorter than the total timeout", resp.Duration)
	}
	raw := string(readAll(t, resp.Raw))
	if !strings.HasPrefix(raw, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(raw, "d") {
		t.Fatalf("raw %q", raw)
	}
	_ = resp.Close()
	_ = f.Close()
	srv.stop()
	sent := string(<-written)
	if !strings.HasPrefix(sent, raw) {
		t.Fatalf("recorded raw is not a prefix of what the server sent")
	}
}

func TestTimeouts(t *testing.T) {
	stall := func(ss *session) {
		if _, err := ss.readRequest(); err != nil {
			return
		}
		ss.waitClosed()
	}
	stallAfterHeaders := func(ss *session) {
		if _, err := ss.readRequest(); err != nil {
			return
		}
		_ = ss.write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"))
		ss.waitClosed()
	}
	cases := []struct {
		name    string
		handler func(*session)
		cfg     Config
	}{
		{"total before headers", stall, Config{TotalTimeout: 200 * time.Millisecond, ReadTimeout: 10 * time.Second}},
		{"read before headers", stall, Config{TotalTimeout: 10 * time.Second, ReadTimeout: 150 * time.Millisecond}},
		{"read idle mid-body", stallAfterHeaders, Config{TotalTimeout: 10 * time.Second, ReadTimeout: 150 * time.Millisecond}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, tc.handler)
			tc.cfg.AllowPrivate = true
			f := newFetcher(t, tc.cfg)
			start := time.Now()
			_, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/"})
			fetchErr(t, err, StatusTimeout, true)
			if time.Since(start) > 5*time.Second {
				t.Fatalf("timeout took %v", time.Since(start))
			}
		})
	}
}

func TestBrokenAndEmpty(t *testing.T) {
	cases := []struct {
		name      string
		handler   func(*session)
		status    int
		retriable bool
	}{
		{"closed without a byte", func(ss *session) { _, _ = ss.readRequest() }, StatusEmptyResponse, false},
		{"reset before response", func(ss *session) {
			if _, err := ss.readRequest(); err == nil {
				ss.reset()
			}
		}, StatusConnectionBroken, true},
		{"reset mid-headers", func(ss *session) {
			if _, err := ss.readRequest(); err == nil {
				_ = ss.write([]byte("HTTP/1.1 200 OK\r\nContent-Ty"))
				ss.reset()
			}
		}, StatusConnectionBroken, true},
		{"reset mid-body", func(ss *session) {
			if _, err := ss.readRequest(); err == nil {
				_ = ss.write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial"))
				ss.reset()
			}
		}, StatusConnectionBroken, true},
		{"close before content-length reached", respond("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nshort"),
			StatusConnectionBroken, true},
		{"broken chunking", respond("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n"),
			StatusConnectionBroken, true},
		{"not HTTP at all", func(ss *session) {
			if _, err := ss.readRequest(); err == nil {
				_ = ss.write([]byte("SSH-2.0-OpenSSH_9.6\r\n\r\n"))
				ss.waitClosed()
			}
		}, StatusConnectionBroken, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, tc.handler)
			f := newFetcher(t, Config{AllowPrivate: true, ReadTimeout: 5 * time.Second})
			_, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/"})
			fe := fetchErr(t, err, tc.status, tc.retriable)
			if !strings.Contains(fe.Error(), "response bytes") {
				t.Fatalf("error %q does not say where it failed", fe)
			}
		})
	}
}

func TestConnectAndLookupFailures(t *testing.T) {
	closedPort := refusedport.Port(t)
	f := newFetcher(t, Config{AllowPrivate: true})
	cases := []struct {
		url       string
		status    int
		retriable bool
	}{
		{"http://site.test:" + strconv.Itoa(closedPort) + "/", StatusConnectFailed, true},
		{"http://no-such-host.test/", StatusDomainLookupFailed, false},
		{"ftp://site.test/", StatusIllegalURI, false},
		{"http:///no-host", StatusIllegalURI, false},
		{"http://site.test:99999/", StatusIllegalURI, false},
		{"http://site.test:0/", StatusIllegalURI, false},
		{"http://user:pw@site.test/", StatusIllegalURI, false},
		{"http://bücher.test/", StatusIllegalURI, false},
		{"http://%zz/", StatusIllegalURI, false},
		{"mailto:someone@site.test", StatusIllegalURI, false},
	}
	for _, tc := range cases {
		_, err := f.Fetch(context.Background(), Request{URL: tc.url})
		var fe *Error
		if !errors.As(err, &fe) || fe.Status != tc.status || fe.Retriable != tc.retriable {
			t.Errorf("%s: got %v, want status %d retriable %v", tc.url, err, tc.status, tc.retriable)
		}
	}
	_, err := f.Fetch(context.Background(), Request{URL: "http://site.test/", Header: http.Header{"X-Bad": {"a\r\nInjected: 1"}}})
	fetchErr(t, err, StatusIllegalURI, false)
	_, err = f.Fetch(context.Background(), Request{URL: "http://site.test/", Header: http.Header{"Bad Name": {"x"}}})
	fetchErr(t, err, StatusIllegalURI, false)
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{UserAgent: "ua\r\nX-Injected: 1"},
		{ConnectTimeout: -1},
		{MaxLengthBytes: -5},
		{MaxIdlePerHost: -1},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) accepted a bad config", c)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero config rejected: %v", err)
	}
}

func TestCancellationIsNotAFetchResult(t *testing.T) {
	srv := startServer(t, func(ss *session) {
		if _, err := ss.readRequest(); err == nil {
			ss.waitClosed()
		}
	})
	f := newFetcher(t, Config{AllowPrivate: true})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := f.Fetch(ctx, Request{URL: "http://site.test:" + srv.port() + "/"})
		errc <- err
	}()
	testwait.Until(t, 5*time.Second, "request to arrive", func() bool { return len(srv.requests) > 0 })
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	var fe *Error
	if errors.As(err, &fe) {
		t.Fatalf("cancellation reported as fetch status %d", fe.Status)
	}
}

// flakyResolver fails every lookup with a temporary DNS error.
type flakyResolver struct{}

func (flakyResolver) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return nil, &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}
}

func TestTemporaryLookupFailureIsRetriable(t *testing.T) {
	f := New(Config{AllowPrivate: true, SpoolDir: t.TempDir()}, flakyResolver{})
	t.Cleanup(func() { _ = f.Close() })
	_, err := f.Fetch(context.Background(), Request{URL: "http://anything.test/"})
	fetchErr(t, err, StatusDomainLookupFailed, true)
}

func TestFallsBackToNextAddress(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\n\r\nfallback"))
	// 127.0.0.2 is loopback too, but nothing listens there on this port.
	f := New(Config{AllowPrivate: true, SpoolDir: t.TempDir()}, staticResolver{"two.test": {"127.0.0.2", "127.0.0.1"}})
	t.Cleanup(func() { _ = f.Close() })
	resp, err := f.Fetch(context.Background(), Request{URL: "http://two.test:" + srv.port() + "/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Close() })
	if resp.IP.String() != "127.0.0.1" {
		t.Fatalf("IP %v, want the address that answered", resp.IP)
	}
}

func TestRegisterFlags(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	c.RegisterFlags("fetch.", fs)
	if err := fs.Parse([]string{"-fetch.keep-alive", "-fetch.max-length-bytes=1000", "-fetch.total-timeout=1m", "-fetch.proxy=socks5://127.0.0.1:1080"}); err != nil {
		t.Fatal(err)
	}
	if !c.KeepAlive || c.MaxLengthBytes != 1000 || c.TotalTimeout != time.Minute ||
		c.UserAgent != DefaultUserAgent || c.ReadTimeout != DefaultReadTimeout || c.Proxy != "socks5://127.0.0.1:1080" {
		t.Fatalf("flags gave %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
