package cdxindex

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// crawledLines are the index lines of the golden crawled events.
func crawledLines(t *testing.T) []cdx.Line {
	t.Helper()
	f, err := os.Open("testdata/crawled-events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	var out []cdx.Line
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ev, err := messages.DecodeCrawled(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if l, ok := cdx.FromCrawled(ev); ok {
			out = append(out, l)
		}
	}
	if len(out) != 2 {
		t.Fatalf("%d indexable golden events, want 2", len(out))
	}
	return out
}

// Put stores a line exactly as OutbackCDX stores the line's CDX11 form, so
// that the crawl-time index and an external OutbackCDX fed by forwarding
// answer the same.
func TestPutMatchesCDX11Ingest(t *testing.T) {
	ix := openTest(t)
	h := ix.Handler(HandlerOptions{OpenWrites: true})
	ls := crawledLines(t)
	dns := cdx.Line{URLKey: "dns:example.org", Timestamp: "20240117090001", Original: "dns:example.org",
		Mimetype: "text/dns", Digest: "", Length: 120, Offset: 500, Filename: "x.warc.gz"}
	revisit := ls[0]
	revisit.Timestamp, revisit.Mimetype, revisit.Offset = "20240118090002", cdx.RevisitMime, 99
	noLength := ls[1]
	noLength.Length = -1
	ls = append(ls, dns, revisit, noLength)
	if err := ix.Put(context.Background(), "put", ls); err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	for _, l := range ls {
		body.WriteString(l.CDX11() + "\n")
	}
	mustPost(t, h, "post", body.String())
	for _, l := range ls {
		for _, out := range []string{"cdx", "json", "cdxj"} {
			q := "?urlkey=" + l.URLKey + "&output=" + out
			got, want := mustGet(t, h, "/put"+q), mustGet(t, h, "/post"+q)
			if got != want || got == "" || got == "[[\"urlkey\",\"timestamp\",\"url\",\"mime\",\"status\",\"digest\",\"redirecturl\",\"robotflags\",\"length\",\"offset\",\"filename\"]]" {
				t.Errorf("%s: Put gave\n%q\nPOST gave\n%q", q, got, want)
			}
		}
	}
	want := "org,example,news)/ 20240117090002 https://news.example.org/ text/html 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - 13107 10422 NPLD-20240117085959123-00001-worker-0.warc.gz\n" +
		"org,example,news)/ 20240118090002 https://news.example.org/ warc/revisit 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - 13107 99 NPLD-20240117085959123-00001-worker-0.warc.gz\n"
	if got := mustGet(t, h, "/put?url=https://news.example.org/"); got != want {
		t.Errorf("news:\n%s\nwant\n%s", got, want)
	}
}

func TestPutIdempotentAndCounted(t *testing.T) {
	ctx := context.Background()
	ix := openTest(t)
	ls := crawledLines(t)
	for range 3 { // Kafka redelivery
		if err := ix.Put(ctx, "c", append(ls, ls...)); err != nil {
			t.Fatal(err)
		}
	}
	if n, ok := ix.Count("c"); !ok || n != 2 {
		t.Fatalf("count %d %v, want 2", n, ok)
	}
	// Same capture, corrected field: rewritten, not added.
	fixed := ls[0]
	fixed.Mimetype = "application/xhtml+xml"
	if err := ix.Put(ctx, "c", []cdx.Line{fixed}); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.Count("c"); n != 2 {
		t.Fatalf("count %d after rewrite, want 2", n)
	}
	if got := mustGet(t, ix.Handler(HandlerOptions{OpenWrites: true}), "/c?url=https://news.example.org/&fl=mime"); got != "application/xhtml+xml\n" {
		t.Errorf("rewritten mime: %q", got)
	}
	// Delete inside a batch after a put of the same key.
	if err := ix.Delete(ctx, "c", []cdx.Line{ls[1], ls[1]}); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.Count("c"); n != 1 {
		t.Fatalf("count %d after delete, want 1", n)
	}
	if err := ix.Delete(ctx, "never", ls); err != nil {
		t.Fatal(err)
	}
	if _, ok := ix.Count("never"); ok {
		t.Error("Delete created a collection")
	}
}

func TestPutBadInput(t *testing.T) {
	ctx := context.Background()
	ix := openTest(t)
	good := crawledLines(t)[0]
	tests := []struct {
		name       string
		collection string
		line       cdx.Line
		want       error
		wantText   string
	}{
		{"no key", "c", cdx.Line{Timestamp: "20240101000000"}, ErrBadLine, "line 2 of 2"},
		{"bad timestamp", "c", func() cdx.Line { l := good; l.Timestamp = "2024-01-01"; return l }(), ErrBadLine, `timestamp "2024-01-01"`},
		{"bad status", "c", func() cdx.Line { l := good; l.Status = "ok"; return l }(), ErrBadLine, `status "ok"`},
		{"nul filename", "c", func() cdx.Line { l := good; l.Filename = "a\x00"; return l }(), ErrBadLine, "NUL"},
		{"bad collection", "a/b", good, ErrBadCollection, `"a/b"`},
		{"empty collection", "", good, ErrBadCollection, `""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ix.Put(ctx, tc.collection, []cdx.Line{good, tc.line})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.wantText) {
				t.Fatalf("err %v, want %v containing %q", err, tc.want, tc.wantText)
			}
			if got := ix.Collections(); len(got) != 0 {
				t.Errorf("a failed Put wrote: %v", got)
			}
		})
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := ix.Put(cctx, "c", []cdx.Line{good}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestReopenAndClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Put(ctx, "c", crawledLines(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); err == nil {
		t.Error("a second Open of a locked directory succeeded")
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if err := ix.Put(ctx, "c", crawledLines(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("Put after Close: %v", err)
	}
	if r := do(t, ix.Handler(HandlerOptions{OpenWrites: true}), http.MethodGet, "/c?url=news.example.org", ""); r.status != http.StatusServiceUnavailable {
		t.Errorf("query after Close: %d %q", r.status, r.body)
	}
	ix2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix2.Close() })
	if n, ok := ix2.Count("c"); !ok || n != 2 {
		t.Errorf("after reopen: count %d %v, want 2", n, ok)
	}
	if got := mustGet(t, ix2.Handler(HandlerOptions{OpenWrites: true}), "/c?url=https://cdn.example.net/lib.js&fl=offset,length"); got != "2201 3190\n" {
		t.Errorf("after reopen: %q", got)
	}
}

// Writers and readers at once: the count stays exact and -race is quiet.
func TestConcurrentPutAndQuery(t *testing.T) {
	ctx := context.Background()
	ix := openTest(t)
	h := ix.Handler(HandlerOptions{OpenWrites: true})
	const writers, batches, perBatch = 4, 10, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers*2)
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for b := range batches {
				ls := make([]cdx.Line, perBatch)
				for i := range ls {
					// Writers overlap on half their lines.
					u := fmt.Sprintf("http://host%d.example/p%d", (w%2)*1000+b, i)
					ls[i] = cdx.Line{Original: u, Timestamp: "20240101000000", Status: "200", Filename: "f", Offset: int64(i), Length: 1}
				}
				if err := ix.Put(ctx, "c", ls); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range batches {
				if r := do(t, h, http.MethodGet, "/c?url=host0.example&matchType=domain&limit=5", ""); r.status != 200 && r.status != 404 {
					errs <- fmt.Errorf("query: %d %s", r.status, r.body)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, _ := ix.Count("c"); n != 2*batches*perBatch {
		t.Errorf("count %d, want %d", n, 2*batches*perBatch)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	dir := t.TempDir()
	ix, err := Open(dir, Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	if _, err := Open(t.TempDir(), Options{Registerer: reg}); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("second index on one registry: %v", err)
	}
	if err := ix.Put(context.Background(), "c", crawledLines(t)); err != nil {
		t.Fatal(err)
	}
	h := ix.Handler(HandlerOptions{OpenWrites: true})
	mustGet(t, h, "/c?url=news.example.org")
	do(t, h, http.MethodPost, "/c?badLines=skip", "junk\n"+goodLine)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		found[mf.GetName()] = mf
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"trawler_cdx_index_entries", map[string]string{"collection": "c"}, 3},
		{"trawler_cdx_ingest_lines_total", map[string]string{"collection": "c", "result": "bad"}, 1},
		{"trawler_cdx_ingest_lines_total", map[string]string{"collection": "c", "result": "added"}, 3},
		{"trawler_cdx_query_duration_seconds", nil, 1}, // sample count
		{"trawler_cdx_write_duration_seconds", map[string]string{"op": "put"}, 2},
	}
	for _, c := range checks {
		if got := metricValue(found[c.name], c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := metricValue(found["trawler_cdx_index_bytes"], nil); got <= 0 {
		t.Errorf("index bytes %v, want > 0", got)
	}
	for _, name := range []string{"trawler_cdx_index_entries", "trawler_cdx_index_bytes", "trawler_cdx_query_duration_seconds",
		"trawler_cdx_write_duration_seconds", "trawler_cdx_ingest_lines_total"} {
		if found[name] == nil {
			t.Errorf("metric %s not registered", name)
		}
	}
}

func TestLoad(t *testing.T) {
	ix := openTest(t)
	var body strings.Builder
	body.WriteString(" CDX N b a m s k r M S V g\n")
	for i := range 25 {
		fmt.Fprintf(&body, "- 20200101000000 http://load.org/%d text/html 200 - - - 10 %d f.warc.gz\n", i, i)
		if i%10 == 3 {
			body.WriteString("not a cdx line\n")
		}
	}
	var bad []*LineError
	st, err := ix.Load(context.Background(), "l", strings.NewReader(body.String()),
		LoadOptions{BatchLines: 7, OnBadLine: func(e *LineError) { bad = append(bad, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 25 || st.Bad != 3 {
		t.Errorf("stats %+v, want 25 added 3 bad", st)
	}
	if len(bad) != 3 || bad[0].Line != 6 || bad[1].Line != 17 || !strings.Contains(bad[2].Error(), `line 28: 4 space-separated fields`) {
		t.Errorf("bad lines reported: %v", bad)
	}
	if n, _ := ix.Count("l"); n != 25 {
		t.Errorf("count %d", n)
	}
	if _, err := ix.Load(context.Background(), "bad name", strings.NewReader(""), LoadOptions{}); !errors.Is(err, ErrBadCollection) {
		t.Errorf("bad collection: %v", err)
	}
}

// metricValue is the value (gauge, counter) or sample count (histogram) of
// the series of mf with labels; -1 if there is none.
func metricValue(mf *dto.MetricFamily, labels map[string]string) float64 {
	if mf == nil {
		return -1
	}
next:
	for _, m := range mf.GetMetric() {
		for _, lp := range m.GetLabel() {
			if labels[lp.GetName()] != lp.GetValue() {
				continue next
			}
		}
		switch {
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue()
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue()
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return -1
}
