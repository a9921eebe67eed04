// Package viralsite serves on loopback a host whose home page links the
// EICAR test file, so that a test crawl writes viral WARCs too: the
// synthetic web (pkg/testweb) has no infected content.
package viralsite

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/clamav/clamdtest"
	"github.com/trawler-crawl/trawler/pkg/fetch"
)

// Host is the site's name; Resolver maps it to loopback.
const Host = "viral.test"

// Start serves the site until the test ends and returns its seed: "/"
// links /eicar.txt (the EICAR test file) and /clean.html.
func Start(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, `<html><body><a href="/eicar.txt">test file</a> <a href="/clean.html">clean</a></body></html>`)
		case "/clean.html":
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html><body>clean</body></html>")
		case "/eicar.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, clamdtest.EICAR)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return fmt.Sprintf("http://%s:%s/", Host, port)
}

// Resolver resolves Host to 127.0.0.1 and every other name as r does.
func Resolver(r fetch.Resolver) fetch.Resolver { return withHost{r} }

type withHost struct{ fetch.Resolver }

func (r withHost) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	if host == Host {
		return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
	}
	return r.Resolver.LookupIPAddr(ctx, host)
}
