package cdxforward

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
)

// Forwarding to a Trawler index, whose writes need a token: without one
// the lines fail at once (401 is permanent); with it they are indexed, and
// the token is asked for at each POST, so when the token file both ends
// read is rotated, forwarding carries on.
func TestForwardToken(t *testing.T) {
	ix, err := cdxindex.Open(t.TempDir(), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("tok-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := func() *admin.Token {
		tok, err := admin.OpenTokenFile(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	srv := httptest.NewServer(ix.Handler(cdxindex.HandlerOptions{Tokens: admin.Tokens{Operator: open()}}))
	t.Cleanup(srv.Close)

	run := func(t *testing.T, token func() string) *Forwarder {
		t.Helper()
		fw, err := New(Options{URL: srv.URL, Collection: "fc", Token: token, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- fw.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		return fw
	}
	ctx := context.Background()
	if err := run(t, nil).Forward(ctx, testLines(2, "none")); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("without a token: %v, want a 401", err)
	}
	fw := run(t, open().Value)
	if err := fw.Forward(ctx, testLines(3, "a")); err != nil {
		t.Fatalf("with the token: %v", err)
	}
	if err := os.WriteFile(path, []byte("tok-2-rotated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fw.Forward(ctx, testLines(2, "b")); err != nil {
		t.Fatalf("with the rotated token: %v", err)
	}
	if n, _ := ix.Count("fc"); n != 5 {
		t.Fatalf("index holds %d lines, want 5", n)
	}
}
