package clamav_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/metricstest"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/pkg/clamav"
	"github.com/trawler-crawl/trawler/pkg/clamav/clamdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// body returns an open func over b that counts its calls.
func body(b []byte, calls *atomic.Int32) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		if calls != nil {
			calls.Add(1)
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
}

// noise returns n deterministic bytes that match no signature.
func noise(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	p := make([]byte, n)
	for i := range p {
		p[i] = 'a' + byte(r.IntN(26))
	}
	return p
}

// withAt returns a copy of base with s written at offset off.
func withAt(base []byte, off int, s string) []byte {
	p := bytes.Clone(base)
	copy(p[off:], s)
	return p
}

func newClient(t *testing.T, o clamav.Options) *clamav.Client {
	t.Helper()
	c, err := clamav.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestScanRealClamd(t *testing.T) {
	const chunk = 1000
	d := clamdtest.Start(t, 1<<20)
	base := noise(1, 10*chunk)
	cases := []struct {
		name    string
		body    []byte
		sig     string // empty: clean
		wantLen int64
	}{
		{"clean", base, "", int64(len(base))},
		{"empty", nil, "", 0},
		{"eicar alone", []byte(clamdtest.EICAR), clamdtest.EICARSignature, int64(len(clamdtest.EICAR))},
		{"eicar across chunk boundary", withAt(base, 3*chunk-10, clamdtest.EICAR), clamdtest.EICARSignature, int64(len(base))},
		{"ndb marker across chunk boundary", withAt(base, 7*chunk-5, clamdtest.TestNDBMarker), clamdtest.NDBSignature, int64(len(base))},
		{"ndb marker at end", withAt(base, len(base)-len(clamdtest.TestNDBMarker), clamdtest.TestNDBMarker), clamdtest.NDBSignature, int64(len(base))},
	}
	for _, addr := range []string{"tcp://" + d.Addr, d.Addr, "unix://" + d.Socket} {
		c := newClient(t, clamav.Options{Address: addr, ChunkSize: chunk, StreamMaxLength: 1 << 20})
		for _, tc := range cases {
			t.Run(addr+"/"+tc.name, func(t *testing.T) {
				res, err := c.Scan(t.Context(), body(tc.body, nil))
				if err != nil {
					t.Fatal(err)
				}
				want := "stream: OK"
				if tc.sig != "" {
					want = "stream: " + tc.sig + " FOUND"
				}
				if res.Reply != want || res.Infected != (tc.sig != "") || res.Signature != tc.sig {
					t.Errorf("got %+v, want reply %q", res, want)
				}
				if res.Truncated || res.Bytes != tc.wantLen {
					t.Errorf("Truncated=%v Bytes=%d, want false %d", res.Truncated, res.Bytes, tc.wantLen)
				}
				if res.Duration <= 0 {
					t.Errorf("Duration %v, want > 0", res.Duration)
				}
			})
		}
	}
}

func TestScanDefaultChunkLargeBody(t *testing.T) {
	d := clamdtest.Start(t, 8<<20)
	c := newClient(t, clamav.Options{Address: "unix://" + d.Socket, StreamMaxLength: 8 << 20})
	// 3 MiB, EICAR straddling the boundary between the 16th and 17th
	// default 64 KiB chunks.
	b := withAt(noise(2, 3<<20), 16*clamav.DefaultChunkSize-20, clamdtest.EICAR)
	res, err := c.Scan(t.Context(), body(b, nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Signature != clamdtest.EICARSignature || res.Bytes != 3<<20 {
		t.Fatalf("got %+v", res)
	}
}

func TestScanStreamMaxLength(t *testing.T) {
	const limit = 4096
	d := clamdtest.Start(t, limit)
	c := newClient(t, clamav.Options{Address: d.Addr, StreamMaxLength: limit, ChunkSize: 1000})
	base := noise(3, 3*limit)
	cases := []struct {
		name      string
		body      []byte
		sig       string
		truncated bool
	}{
		{"exactly the limit", base[:limit], "", false},
		{"one over the limit", base[:limit+1], "", true},
		{"marker after the limit is not seen", withAt(base, limit+100, clamdtest.TestNDBMarker), "", true},
		{"marker straddling the limit is not seen", withAt(base, limit-10, clamdtest.TestNDBMarker), "", true},
		{"marker in the head is seen", withAt(base, limit-100, clamdtest.TestNDBMarker), clamdtest.NDBSignature, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Scan(t.Context(), body(tc.body, nil))
			if err != nil {
				t.Fatal(err)
			}
			if res.Signature != tc.sig || res.Truncated != tc.truncated || res.Bytes != min(int64(len(tc.body)), limit) {
				t.Errorf("got %+v, want sig %q truncated %v", res, tc.sig, tc.truncated)
			}
		})
	}
}

// When clamd's StreamMaxLength is below the configured length, clamd
// refuses long streams: the client halves what it sends until clamd
// accepts it, gives its verdict on that head (truncated), and keeps the
// lower length, so later scans need one attempt. Below MinStreamLength it
// gives up: that clamd cannot be used as configured.
func TestScanLimitMismatchLearnsClamdsLimit(t *testing.T) {
	d := clamdtest.Start(t, 200<<10)
	c := newClient(t, clamav.Options{Address: d.Addr, StreamMaxLength: 1 << 20, Retries: 0, ChunkSize: 16 << 10})
	infected := withAt(noise(4, 600<<10), 10, clamdtest.TestNDBMarker)
	var calls atomic.Int32
	res, err := c.Scan(t.Context(), body(infected, &calls))
	if err != nil {
		t.Fatalf("scan after clamd refused the long stream: %v", err)
	}
	if res.Signature != clamdtest.NDBSignature || !res.Truncated || res.Bytes != 128<<10 || c.StreamLength() != 128<<10 {
		t.Errorf("got %+v with stream length %d, want the marker found in a 128 KiB head", res, c.StreamLength())
	}
	if calls.Load() != 4 { // 1 MiB, 512, 256 refused; 128 KiB accepted
		t.Errorf("%d attempts, want 4", calls.Load())
	}
	calls.Store(0)
	if res, err := c.Scan(t.Context(), body(noise(5, 600<<10), &calls)); err != nil || res.Infected || !res.Truncated || calls.Load() != 1 {
		t.Errorf("second scan: %+v, %v after %d attempts; want clean, truncated, one attempt", res, err, calls.Load())
	}
}

func TestScanLimitBelowMinimumGivesUp(t *testing.T) {
	d := clamdtest.Start(t, 1024)
	c := newClient(t, clamav.Options{Address: d.Addr, StreamMaxLength: 1 << 20, Retries: 3, RetryDelay: time.Millisecond, ChunkSize: 512})
	var calls atomic.Int32
	_, err := c.Scan(t.Context(), body(noise(4, 200<<10), &calls))
	if !errors.Is(err, clamav.ErrSizeLimit) || !errors.Is(err, clamav.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrSizeLimit and ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "size limit exceeded") {
		t.Errorf("err %q does not quote clamd's reply", err)
	}
	if calls.Load() != 5 || c.StreamLength() != clamav.MinStreamLength { // 1 MiB down to 64 KiB, then no retries
		t.Errorf("%d attempts, stream length %d; want 5 and %d", calls.Load(), c.StreamLength(), clamav.MinStreamLength)
	}
}

func TestScanClamdStopped(t *testing.T) {
	d := clamdtest.Start(t, 1<<20)
	reg := prometheus.NewRegistry()
	for _, addr := range []string{d.Addr, "unix://" + d.Socket} {
		c := newClient(t, clamav.Options{Address: addr, Retries: 2, RetryDelay: time.Millisecond})
		if err := c.Ping(t.Context()); err != nil {
			t.Fatalf("ping %s before stop: %v", addr, err)
		}
	}
	d.Stop()
	for i, addr := range []string{d.Addr, "unix://" + d.Socket} {
		o := clamav.Options{Address: addr, Retries: 2, RetryDelay: time.Millisecond}
		if i == 0 {
			o.Registerer = reg
		}
		c := newClient(t, o)
		var calls atomic.Int32
		_, err := c.Scan(t.Context(), body([]byte("hello"), &calls))
		if !errors.Is(err, clamav.ErrUnavailable) {
			t.Fatalf("%s: err = %v, want ErrUnavailable", addr, err)
		}
		if calls.Load() != 3 {
			t.Errorf("%s: %d attempts, want 3", addr, calls.Load())
		}
		if err := c.Ping(t.Context()); !errors.Is(err, clamav.ErrUnavailable) {
			t.Errorf("%s: ping err = %v, want ErrUnavailable", addr, err)
		}
		if _, err := c.Version(t.Context()); !errors.Is(err, clamav.ErrUnavailable) {
			t.Errorf("%s: version err = %v, want ErrUnavailable", addr, err)
		}
	}
	if got := metricstest.Value(t, reg, "trawler_clamav_retries_total"); got != 2 {
		t.Errorf("retries_total = %v, want 2", got)
	}
}

func TestPingVersion(t *testing.T) {
	d := clamdtest.Start(t, 1<<20)
	for _, addr := range []string{d.Addr, "unix://" + d.Socket} {
		c := newClient(t, clamav.Options{Address: addr})
		if err := c.Ping(t.Context()); err != nil {
			t.Errorf("ping %s: %v", addr, err)
		}
		v, err := c.Version(t.Context())
		if err != nil || !strings.HasPrefix(v, "ClamAV 1.") {
			t.Errorf("version %s = %q, %v", addr, v, err)
		}
	}
}

func TestMetricsRealClamd(t *testing.T) {
	d := clamdtest.Start(t, 1<<20)
	reg := prometheus.NewRegistry()
	c := newClient(t, clamav.Options{Address: d.Addr, Registerer: reg})
	for _, b := range []string{"clean body", "x" + clamdtest.EICAR, clamdtest.TestNDBMarker} {
		if _, err := c.Scan(t.Context(), body([]byte(b), nil)); err != nil {
			t.Fatal(err)
		}
	}
	for result, want := range map[string]float64{"clean": 1, "infected": 2, "error": 0} {
		if got := metricstest.Value(t, reg, "trawler_clamav_scans_total", result); got != want {
			t.Errorf("scans_total{result=%q} = %v, want %v", result, got, want)
		}
	}
	wantBytes := float64(len("clean body") + 1 + len(clamdtest.EICAR) + len(clamdtest.TestNDBMarker))
	if got := metricstest.Value(t, reg, "trawler_clamav_scanned_bytes_total"); got != wantBytes {
		t.Errorf("scanned_bytes_total = %v, want %v", got, wantBytes)
	}
	if got := metricstest.Value(t, reg, "trawler_clamav_scan_duration_seconds"); got != 3 {
		t.Errorf("scan_duration_seconds count = %v, want 3", got)
	}
	if _, err := clamav.New(clamav.Options{Address: d.Addr, Registerer: reg}); err == nil {
		t.Error("second Client on the same Registerer: want a registration error")
	}
}

func TestScanContextCancelledBeforeStart(t *testing.T) {
	d := clamdtest.Start(t, 1<<20)
	c := newClient(t, clamav.Options{Address: d.Addr})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := c.Scan(ctx, body([]byte("x"), nil))
	if !errors.Is(err, context.Canceled) || errors.Is(err, clamav.ErrUnavailable) {
		t.Fatalf("err = %v, want context.Canceled only", err)
	}
}

// Scans refused together lower the length once between them, and every
// one of them still gets a verdict: none gives up because another scan
// lowered the length first.
func TestScanConcurrentRefusalsHalveOnce(t *testing.T) {
	d := clamdtest.Start(t, 600<<10)
	c := newClient(t, clamav.Options{Address: d.Addr, StreamMaxLength: 1 << 20, Retries: 0, ChunkSize: 64 << 10})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			res, err := c.Scan(t.Context(), body(noise(uint64(i), 900<<10), nil))
			if err == nil && (!res.Truncated || res.Bytes != 512<<10) {
				err = fmt.Errorf("scan %d: %+v, want a 512 KiB head", i, res)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := c.StreamLength(); got != 512<<10 {
		t.Errorf("stream length %d KiB, want 512", got>>10)
	}
}
