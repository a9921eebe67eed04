// Package baseline is the bare baseline that crawl benchmarks compare
// against (issue 5): it fetches a fixed list of URLs with a pool of
// goroutines and gzips each body into a discard writer while taking its
// SHA-1 (a WARC writer's one unavoidable digest), doing nothing a
// crawler does besides (no frontier, no politeness, no WARC, no parsing).
// Its pages per second and CPU per page are the ceiling of the machine for
// the same fetch-and-compress work.
package baseline

import (
	"context"
	"crypto/sha1" //nolint:gosec // SHA-1 is what WARC digests use
	"crypto/tls"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Defaults applied to zero fields of Options.
const (
	DefaultGoroutines = 32
	DefaultTimeout    = 60 * time.Second
)

// Resolver looks host names up; *net.Resolver and testweb's Resolver
// satisfy it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Options configure Run. Zero fields take the documented defaults.
type Options struct {
	// Goroutines is the number of concurrent fetchers (default 32).
	Goroutines int
	// GzipLevel is the compress/gzip level each body is compressed at:
	// 1 to 9, or gzip.HuffmanOnly. Zero means gzip.DefaultCompression
	// (level 6), so gzip.NoCompression cannot be chosen: storing without
	// compression is not the ceiling being measured.
	GzipLevel int
	// Client fetches the URLs. Nil builds one that dials through
	// Resolver, follows no redirects (each URL is fetched once, as a
	// crawler does), asks for no compression, accepts any certificate and
	// keeps connections alive only with KeepAlive.
	Client *http.Client
	// KeepAlive reuses connections in the built client. Off by default,
	// like a crawler's HTTP/1.0-style Connection: close fetches.
	KeepAlive bool
	// Resolver resolves host names for the built client (nil: the system
	// resolver). It must be nil when Client is set.
	Resolver Resolver
	// Timeout bounds each fetch, body included, in the built client
	// (default 60 s).
	Timeout time.Duration
	// Logger receives one debug line per failed fetch; nil discards.
	Logger *slog.Logger
}

// Result is what one Run measured.
type Result struct {
	// Pages is the number of responses read to the end, whatever their
	// status code.
	Pages int
	// Bytes is the number of body bytes read and compressed, including
	// those of fetches that failed part-way.
	Bytes int64
	// Errors is the number of URLs whose request or body read failed.
	Errors int
	// Wall is the elapsed time of the whole run.
	Wall time.Duration
	// CPU is the user plus system CPU time this process used during the
	// run (getrusage RUSAGE_SELF), so it includes anything else running
	// in the process, such as an in-process test server.
	CPU time.Duration
	// PagesPerSec is Pages divided by Wall.
	PagesPerSec float64
	// CPUMicrosPerPage is CPU in microseconds divided by Pages.
	CPUMicrosPerPage float64
}

// withDefaults validates o and fills its zero fields.
func (o Options) withDefaults() (Options, error) {
	var errs []error
	if o.Goroutines < 0 {
		errs = append(errs, fmt.Errorf("goroutines: %d is negative", o.Goroutines))
	}
	if o.GzipLevel == 0 {
		o.GzipLevel = gzip.DefaultCompression
	}
	if o.GzipLevel < gzip.HuffmanOnly || o.GzipLevel > gzip.BestCompression {
		errs = append(errs, fmt.Errorf("gzipLevel: %d out of range %d..%d", o.GzipLevel, gzip.HuffmanOnly, gzip.BestCompression))
	}
	if o.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout: %v is negative", o.Timeout))
	}
	if o.Client != nil && o.Resolver != nil {
		errs = append(errs, errors.New("resolver: only used by the built client, but Client is set"))
	}
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("baseline options: %w", err)
	}
	if o.Goroutines == 0 {
		o.Goroutines = DefaultGoroutines
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// Run fetches every URL once with o.Goroutines workers, compressing each
// body, and reports the rates. Fetch failures are counted in
// Result.Errors, not returned; the error is for bad options and for ctx
// ending early, in which case the partial Result is returned with it.
func Run(ctx context.Context, urls []string, o Options) (Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Result{}, err
	}
	client := o.Client
	if client == nil {
		tr := newTransport(o)
		defer tr.CloseIdleConnections()
		client = &http.Client{
			Transport:     tr,
			Timeout:       o.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	cpu0, err := cpuTime()
	if err != nil {
		return Result{}, fmt.Errorf("baseline: %w", err)
	}
	start := time.Now()
	var next atomic.Int64
	totals := make([]Result, o.Goroutines)
	var wg sync.WaitGroup
	for g := range o.Goroutines {
		wg.Go(func() { totals[g] = worker(ctx, client, urls, &next, o) })
	}
	wg.Wait()
	res := Result{Wall: time.Since(start)}
	cpu1, err := cpuTime()
	if err != nil {
		return Result{}, fmt.Errorf("baseline: %w", err)
	}
	res.CPU = cpu1 - cpu0
	for _, t := range totals {
		res.add(t)
	}
	res.rates()
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("baseline run stopped after %d of %d URLs: %w", res.Pages+res.Errors, len(urls), err)
	}
	return res, nil
}

// Merge pools runs of the baseline into one result: its rates are over the
// summed pages, wall time and CPU.
func Merge(runs ...Result) Result {
	var m Result
	for _, r := range runs {
		m.add(r)
		m.Wall += r.Wall
		m.CPU += r.CPU
	}
	m.rates()
	return m
}

func (r *Result) add(o Result) {
	r.Pages += o.Pages
	r.Bytes += o.Bytes
	r.Errors += o.Errors
}

// rates sets PagesPerSec and CPUMicrosPerPage from the totals.
func (r *Result) rates() {
	if r.Wall > 0 {
		r.PagesPerSec = float64(r.Pages) / r.Wall.Seconds()
	}
	if r.Pages > 0 {
		r.CPUMicrosPerPage = float64(r.CPU.Microseconds()) / float64(r.Pages)
	}
}

// worker takes URLs by index until none are left or ctx ends, reusing one
// gzip writer, one SHA-1 and one copy buffer.
func worker(ctx context.Context, client *http.Client, urls []string, next *atomic.Int64, o Options) Result {
	var res Result
	zw, _ := gzip.NewWriterLevel(io.Discard, o.GzipLevel) // level checked in withDefaults
	sink := &gzipSHA1{zw: zw, h: sha1.New()}              //nolint:gosec // SHA-1 is what WARC digests use
	buf := make([]byte, 32<<10)
	for ctx.Err() == nil {
		i := int(next.Add(1)) - 1
		if i >= len(urls) {
			break
		}
		n, err := fetch(ctx, client, urls[i], sink, buf)
		res.Bytes += n
		if err != nil {
			if ctx.Err() != nil {
				break // not the URL's fault
			}
			res.Errors++
			o.Logger.Debug("baseline fetch failed", "url", urls[i], "err", err)
			continue
		}
		res.Pages++
	}
	return res
}

// gzipSHA1 compresses and digests what is written to it, in one pass.
type gzipSHA1 struct {
	zw *gzip.Writer
	h  hash.Hash
}

func (s *gzipSHA1) Write(p []byte) (int, error) {
	s.h.Write(p)
	return s.zw.Write(p)
}

// fetch GETs one URL, compresses its body into io.Discard and digests it.
func fetch(ctx context.Context, client *http.Client, u string, sink *gzipSHA1, buf []byte) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, fmt.Errorf("request %q: %w", u, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("get %s: %w", u, err)
	}
	defer resp.Body.Close()
	sink.zw.Reset(io.Discard)
	sink.h.Reset()
	n, err := io.CopyBuffer(sink, resp.Body, buf)
	if err != nil {
		return n, fmt.Errorf("read %s after %d bytes: %w", u, n, err)
	}
	if err := sink.zw.Close(); err != nil {
		return n, fmt.Errorf("gzip %s: %w", u, err)
	}
	var sum [sha1.Size]byte
	sink.h.Sum(sum[:0])
	return n, nil
}

// newTransport builds the default client's transport.
func newTransport(o Options) *http.Transport {
	var r Resolver = net.DefaultResolver
	if o.Resolver != nil {
		r = o.Resolver
	}
	return &http.Transport{
		DialContext:         dialVia(r),
		DisableKeepAlives:   !o.KeepAlive,
		DisableCompression:  true,
		MaxIdleConnsPerHost: o.Goroutines,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // archiving is not trusting
	}
}

// dialVia returns a DialContext that resolves the host through r and
// tries each address in turn.
func dialVia(r Resolver) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		ips, err := r.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("dial %s: no addresses", addr)
		}
		var errs []error
		for _, ip := range ips {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.IP.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
}
