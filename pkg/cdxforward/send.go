package cdxforward

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// permanentError marks an answer that retrying cannot change.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// added matches OutbackCDX's answer to a POST ("Added 12 records").
var added = regexp.MustCompile(`^Added (\d+) records`)

// send posts the batch, retrying transient failures with backoff until
// RetryFor has passed or ctx ends.
func (f *Forwarder) send(ctx context.Context, batch []*chunk) error {
	var body bytes.Buffer
	n := 0
	for _, c := range batch {
		for _, l := range c.lines {
			body.WriteString(l)
			body.WriteByte('\n')
			n++
		}
	}
	deadline := time.Now().Add(f.o.RetryFor)
	delay := f.o.MinBackoff
	for attempt := 1; ; attempt++ {
		err := f.post(ctx, body.Bytes(), n)
		if err == nil {
			f.m.lines.Add(float64(n))
			f.m.failing.Set(0)
			return nil
		}
		var perm *permanentError
		giveUp := errors.As(err, &perm) || ctx.Err() != nil || time.Now().Add(delay).After(deadline)
		if giveUp {
			f.m.failures.Inc()
			f.m.failing.Set(1)
			f.log.Error("CDX lines not forwarded; the caller keeps them and will retry", "lines", n,
				"attempts", attempt, "err", err)
			return fmt.Errorf("cdxforward: %d lines to %s not accepted after %d attempts: %w", n, f.endpoint, attempt, err)
		}
		f.m.retries.Inc()
		wait := jitter(delay)
		f.log.Warn("CDX forward failed; retrying", "lines", n, "attempt", attempt, "backoff", wait, "err", err)
		if !sleep(ctx, wait) {
			continue // ctx ended: the next failure gives up
		}
		delay = min(2*delay, f.o.MaxBackoff)
	}
}

// jitter spreads retries over [d/2, d), so writers that failed together do
// not retry together ("equal jitter").
func jitter(d time.Duration) time.Duration {
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(half)
}

// sleep waits d or until ctx ends; it reports whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// post makes one attempt. 2xx with the whole count added succeeds; 408,
// 429, 5xx and transport errors are transient; anything else is permanent.
func (f *Forwarder) post(ctx context.Context, body []byte, n int) error {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.endpoint, bytes.NewReader(body))
	if err != nil {
		return &permanentError{fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	if f.o.Token != nil {
		if tok := f.o.Token(); tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	resp, err := f.o.Client.Do(req)
	f.m.duration.Observe(time.Since(start).Seconds())
	if err != nil {
		f.m.requests.WithLabelValues("error").Inc()
		return fmt.Errorf("POST: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	f.m.requests.WithLabelValues(strconv.Itoa(resp.StatusCode)).Inc()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return checkAdded(msg, n)
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests ||
		resp.StatusCode >= 500:
		return fmt.Errorf("POST: %s: %s", resp.Status, firstLine(msg))
	default:
		return &permanentError{fmt.Errorf("POST: %s: %s", resp.Status, firstLine(msg))}
	}
}

// checkAdded compares OutbackCDX's count with the lines sent: fewer means
// lines were dropped on the far side, which must not pass unnoticed. Other
// servers' answers are taken at their status code.
func checkAdded(msg []byte, n int) error {
	m := added.FindSubmatch(msg)
	if m == nil {
		return nil
	}
	got, err := strconv.Atoi(string(m[1]))
	if err != nil || got < n {
		return &permanentError{fmt.Errorf("OutbackCDX added %s of %d lines", m[1], n)}
	}
	return nil
}

// firstLine is the start of a response body, for error messages
// (OutbackCDX's 400 names the bad line first, then a stack trace).
func firstLine(b []byte) string {
	line, _ := bufio.NewReader(bytes.NewReader(b)).ReadString('\n')
	line = strings.TrimSpace(line)
	if len(line) > 300 {
		line = line[:300] + "..."
	}
	return line
}
