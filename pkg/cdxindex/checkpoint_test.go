package cdxindex

import (
	"archive/tar"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// Each gives back the lines Put stored, and a checkpoint served over the
// API opens as an index with the same entries.
func TestEachAndCheckpoint(t *testing.T) {
	ctx := context.Background()
	ix := openTest(t)
	in := []cdx.Line{
		{Original: "http://example.org/a", Timestamp: "20261125101010", Mimetype: "text/html", Status: "200",
			Digest: "AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH", Length: 10, Offset: 0, Filename: "x.warc.gz"},
		{Original: "http://example.org/b", Timestamp: "20261125101011", Mimetype: "warc/revisit", Status: "304",
			Digest: "AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH", Redirect: "http://example.org/c", Length: 12, Offset: 10, Filename: "x.warc.gz"},
		{Original: "dns:example.org", Timestamp: "20261125101009", Mimetype: "text/dns", Length: 5, Offset: 22, Filename: "x.warc.gz"},
	}
	if err := ix.Put(ctx, "fc", in); err != nil {
		t.Fatal(err)
	}
	got := map[string]cdx.Line{}
	if err := ix.Each(ctx, "fc", func(l cdx.Line) error { got[l.Original] = l; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, l := range in {
		g := got[l.Original]
		g.URLKey = ""
		if g != l {
			t.Errorf("Each gave %+v, want %+v", g, l)
		}
	}

	srv := httptest.NewServer(ix.Handler(HandlerOptions{Tokens: admin.Tokens{Operator: admin.StaticToken("tok")}}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/checkpoint", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get(CheckpointHeader) != "fc=3" {
		t.Fatalf("checkpoint: %s, counts %q", resp.Status, resp.Header.Get(CheckpointHeader))
	}
	dir := t.TempDir()
	tr := tar.NewReader(resp.Body)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if err := os.WriteFile(filepath.Join(dir, h.Name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if n, _ := cp.Count("fc"); n != 3 {
		t.Fatalf("checkpoint holds %d entries", n)
	}
	// The checkpoint directory beside the index is gone.
	if left, _ := filepath.Glob(ix.dir + ".checkpoint-*"); len(left) > 0 {
		t.Fatalf("checkpoint left behind: %v", left)
	}
}
