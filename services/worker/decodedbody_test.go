package worker

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/spool"
)

// TestDecodedBody reads a payload for extraction as its content coding
// says. An identity body tells its size, in memory or spooled to a file,
// so the extractors that read a body whole allocate once; a coded body
// is decoded, and a damaged one is an error, not a capture lost.
func TestDecodedBody(t *testing.T) {
	text := strings.Repeat("var u = '/a/b.html';\n", 200)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(text))
	_ = zw.Close()
	for _, tc := range []struct {
		name, coding string
		body         []byte
		threshold    int64
		sized        bool
		wantErr      bool
	}{
		{"identity in memory", "", []byte(text), 1 << 20, true, false},
		{"identity in a file", "", []byte(text), 100, true, false},
		{"gzip", "gzip", gz.Bytes(), 1 << 20, false, false},
		{"damaged gzip", "gzip", []byte("not gzip at all"), 1 << 20, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payload := spool.New(tc.threshold, t.TempDir())
			t.Cleanup(func() { _ = payload.Close() })
			if _, err := payload.Write(tc.body); err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			if tc.coding != "" {
				h.Set("Content-Encoding", tc.coding)
			}
			body, err := decodedBody(&fetch.Response{Header: h, Payload: payload})
			if tc.wantErr {
				if err == nil {
					t.Fatal("decodedBody of a damaged gzip body: no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer body.Close()
			sz, ok := body.(interface{ Size() int64 })
			if ok != tc.sized || (ok && sz.Size() != int64(len(tc.body))) {
				t.Errorf("sized = %v (want %v)", ok, tc.sized)
			}
			got, err := io.ReadAll(body)
			if err != nil || string(got) != text {
				t.Errorf("read %d bytes, %v; want %d", len(got), err, len(text))
			}
		})
	}
}
