package standalone

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// A --cdx-forward-url that is not an http(s) URL is refused with the
// flag's name, and nothing is crawled.
func TestBadForwardURL(t *testing.T) {
	for _, bad := range []string{"ftp://cdx.example/", "cdx.example:8080", "http://"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		sum, err := Run(ctx, Config{DataDir: t.TempDir(), Seeds: []string{"http://www.example.org/"}, UntilIdle: true,
			KafkaListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", CDXForwardURL: bad,
			Crawl: "fc", Stream: "npld", Threads: 1, Partitions: 1, TimeZone: "UTC"},
			Deps{Profile: testProfile(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Registry: prometheus.NewRegistry(), Version: "test"})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "forward-url") {
			t.Errorf("forward URL %q: error %v (summary %+v), want one naming forward-url", bad, err, sum)
		}
	}
}
