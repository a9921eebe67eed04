package worker

import (
	"bufio"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/fetch"
)

// The crawl.log size of an HTTP response is its message body as received,
// as Heritrix's Recorder counts it: everything after the final head.
func TestReadHTTPHead(t *testing.T) {
	tests := []struct {
		name, raw string
		status    int
		mime      string
		body      int64
	}{
		{"plain", "HTTP/1.0 200 OK\r\nContent-Type: Text/HTML; charset=x\r\n\r\nhello", 200, "text/html", 5},
		{"chunked framing counts", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nsafe\r\n0\r\n\r\n", 200, "unknown", 14},
		{"interim 100 is head", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n\r\nno", 404, "text/plain", 2},
		{"bare LF", "HTTP/1.0 304 Not Modified\nETag: x\n\n", 304, "unknown", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head, h, status, err := readHTTPHead(bufio.NewReader(strings.NewReader(tt.raw)))
			if err != nil {
				t.Fatal(err)
			}
			if body := int64(len(tt.raw)) - head; status != tt.status || fetch.MediaType(h.Get("Content-Type")) != tt.mime || body != tt.body {
				t.Errorf("status %d mime %q body %d, want %d %q %d", status, fetch.MediaType(h.Get("Content-Type")), body, tt.status, tt.mime, tt.body)
			}
		})
	}
	if _, _, _, err := readHTTPHead(bufio.NewReader(strings.NewReader("SSH-2.0\r\n\r\n"))); err == nil {
		t.Error("a non-HTTP head parsed")
	}
}
