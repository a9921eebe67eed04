package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/trawler-crawl/trawler/internal/testwait"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

// `trawler frontier serve` refuses to serve without a token except on
// loopback, and serves a gRPC client that carries the token.
func TestFrontierServe(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	redisAddr := rdb.Options().Addr
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{nil, "needs --admin-token-file"},
		{[]string{"--insecure", "--listen", "0.0.0.0:0"}, "only on a loopback --listen"},
		{[]string{"--insecure", "--admin-token-file", tokenFile}, "exclude each other"},
		{[]string{"--admin-token-file", tokenFile, "--frontier", "bad{name}"}, "frontier name \"bad{name}\""},
	} {
		code, _, errOut := runCLI(t, append([]string{"frontier", "serve", "--redis", redisAddr, "--listen", "127.0.0.1:0"}, tc.args...)...)
		if code == 0 || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want an error with %q", tc.args, code, errOut, tc.msg)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncWriter
	done := make(chan error, 1)
	go func() {
		done <- runFrontier(ctx, []string{"serve", "--redis", redisAddr, "--listen", "127.0.0.1:0", "--admin-token-file", tokenFile,
			"--log-format", "json", "--admin-addr", "127.0.0.1:0"}, &out, &errb)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	addrRe := regexp.MustCompile(`on (127\.0\.0\.1:\d+)`)
	testwait.Until(t, 20*time.Second, "frontier serve listening", func() bool { return addrRe.MatchString(out.String()) })
	addr := addrRe.FindStringSubmatch(out.String())[1]
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	c := pb.NewURLFrontierClient(conn)
	if _, err := c.ListCrawls(context.Background(), &pb.Local{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("without the token: %v", err)
	}
	authed := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer tok-123")
	nodes, err := c.ListNodes(authed, &pb.Empty{})
	if err != nil || len(nodes.GetValues()) != 1 {
		t.Fatalf("ListNodes: %v, %v", nodes, err)
	}
	metricsURL := regexp.MustCompile(`metrics on (http://\S+/metrics)`).FindStringSubmatch(out.String())
	if metricsURL == nil {
		t.Fatalf("no metrics address in %q", out.String())
	}
	resp, err := http.Get(metricsURL[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if !strings.Contains(string(body), `trawler_urlfrontier_calls_total{code="Unauthenticated"`) {
		t.Fatalf("metrics lack the refused call:\n%s", body)
	}
}
