package warcwriter

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"net/http/httputil"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/metricstest"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"
)

var fetchDate = time.Date(2025, 3, 4, 10, 11, 12, 345_000_000, time.UTC)

// TestRoundTripStrict writes a capture with metadata, a revisit and a dns
// record, and reads them back with gowarc failing on every finding, in
// each WARC version.
func TestRoundTripStrict(t *testing.T) {
	for _, vc := range versionCases() {
		t.Run(vc.name(), func(t *testing.T) { roundTripStrict(t, vc) })
	}
}

func roundTripStrict(t *testing.T, vc versionCase) {
	dir := t.TempDir()
	reg := prometheus.NewRegistry()
	cfg := testConfig(dir)
	cfg.Version = vc.setting
	w, closed := newTestWriter(t, cfg, WithRegisterer(reg))
	ctx := context.Background()

	first := newFetch("http://example.com/page", fetchDate, []byte("<html>hello</html>"), false)
	first.c.BlockDigest = sha1Digest(first.raw)
	first.c.Metadata = &Metadata{
		Via: "http://example.com/", HopsFromSeed: "L", SourceTag: "seeds-1", FetchTimeMs: 42,
		Outlinks: []Outlink{
			{URL: "http://example.com/a b", Hop: "L", Context: "a/@href"},
			{URL: "http://example.com/img.png", Hop: "E"},
			{URL: "http://example.com/x\r\ny", Hop: "L", Context: "script"},
		},
	}
	locFirst, err := w.WriteCapture(ctx, first.c)
	if err != nil {
		t.Fatalf("WriteCapture: %v", err)
	}

	again := newFetch("http://example.com/page", fetchDate.Add(time.Hour), first.entity, false)
	again.c.Revisit = &Revisit{RefersToURI: "http://example.com/page", RefersToDate: fetchDate}
	locRevisit, err := w.WriteCapture(ctx, again.c)
	if err != nil {
		t.Fatalf("WriteCapture revisit: %v", err)
	}

	answer := []byte("20250304101112\nexample.com.\t300\tIN\tA\t192.0.2.10\n")
	locDNS, err := w.WriteDNS(ctx, "example.com", fetchDate, "192.0.2.53", answer)
	if err != nil {
		t.Fatalf("WriteDNS: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	names := warcFiles(t, dir)
	if len(names) != 1 || !regexp.MustCompile(`^TEST-20250304050607123-00000-testhost\.warc\.gz$`).MatchString(names[0]) {
		t.Fatalf("files = %v, want one TEST-20250304050607123-00000-testhost.warc.gz", names)
	}
	path := filepath.Join(dir, names[0])
	recs := readAll(t, path, strictOptions()...)
	wantTypes := []gowarc.RecordType{gowarc.Warcinfo, gowarc.Request, gowarc.Response, gowarc.Metadata,
		gowarc.Request, gowarc.Revisit, gowarc.Response}
	var gotTypes []gowarc.RecordType
	for _, r := range recs {
		gotTypes = append(gotTypes, r.typ)
		if r.version != vc.line {
			t.Errorf("record %s %s: version %s, want %s", r.typ, r.id, r.version, vc.line)
		}
		if !r.validation.Valid() {
			t.Errorf("record %s %s: %v", r.typ, r.id, r.validation.String())
		}
		if r.h.Get(gowarc.WarcRecordID) == "" || r.h.Get(gowarc.ContentLength) == "" || r.h.Get(gowarc.WarcBlockDigest) == "" {
			t.Errorf("record %s lacks id, length or block digest: %s", r.typ, r.h)
		}
	}
	if !slices.Equal(gotTypes, wantTypes) {
		t.Fatalf("record types = %v, want %v", gotTypes, wantTypes)
	}

	checkWarcinfo(t, recs[0], names[0], vc)
	for _, r := range recs[1:] {
		wantHeader(t, r, gowarc.WarcWarcinfoID, "<"+recs[0].id+">")
	}
	checkCapture(t, first, recs[1], recs[2], vc)
	wantHeader(t, recs[2], gowarc.WarcBlockDigest, sha1Digest(first.raw))
	checkMetadata(t, recs[3], recs[2].id)
	checkCapture(t, again, recs[4], recs[5], vc)
	checkRevisit(t, again, recs[5], recs[2], vc)
	checkDNS(t, recs[6], answer)

	for _, c := range []struct {
		loc Location
		rec readRecord
	}{{locFirst, recs[2]}, {locRevisit, recs[5]}, {locDNS, recs[6]}} {
		if c.loc.Filename != names[0] || c.loc.Offset != c.rec.offset {
			t.Errorf("location %+v, want file %s offset %d", c.loc, names[0], c.rec.offset)
		}
		if m := readMember(t, dir, c.loc); m.id != c.rec.id {
			t.Errorf("member at %+v is record %s, want %s", c.loc, m.id, c.rec.id)
		}
	}

	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	cf := closed.all()
	if len(cf) != 1 || cf[0].Name != names[0] || cf[0].Path != path || cf[0].Size != st.Size() || cf[0].Records != 7 {
		t.Errorf("closed = %+v, want %s size %d with 7 records", cf, path, st.Size())
	}
	if len(cf) == 1 && (!cf[0].Opened.Equal(time.Date(2025, 3, 4, 5, 6, 7, 123_000_000, time.UTC)) || !cf[0].Closed.After(cf[0].Opened)) {
		t.Errorf("closed times = %v .. %v", cf[0].Opened, cf[0].Closed)
	}
	for _, c := range []struct {
		name, label string
		want        float64
	}{
		{"trawler_warc_records_written_total", "response", 2},
		{"trawler_warc_records_written_total", "revisit", 1},
		{"trawler_warc_records_written_total", "warcinfo", 1},
		{"trawler_warc_files_closed_total", "", 1},
		{"trawler_warc_open_files", "", 0},
	} {
		var labels []string
		if c.label != "" {
			labels = []string{c.label}
		}
		if got := metricstest.Value(t, reg, c.name, labels...); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.label, got, c.want)
		}
	}
}

func checkWarcinfo(t *testing.T, r readRecord, name string, vc versionCase) {
	t.Helper()
	wantHeader(t, r, gowarc.WarcFilename, name)
	wantHeader(t, r, gowarc.ContentType, gowarc.ApplicationWarcFields)
	wantHeader(t, r, gowarc.WarcDate, time.Date(2025, 3, 4, 5, 6, 7, 123_000_000, time.UTC).Format(vc.dateLayout))
	if r.fields == nil {
		t.Fatal("warcinfo block is not warc-fields")
	}
	for k, v := range map[string]string{
		"software": "trawler/1.0", "hostname": "testhost", "format": vc.format, "conformsTo": vc.conformsTo,
		"isPartOf": "npld-2025", "operator": "Web Archive <wa@example.org>", "robots": "obey",
		"http-header-user-agent": "trawler/1.0 (+https://example.org/crawler)",
	} {
		if got := r.fields.Get(k); got != v {
			t.Errorf("warcinfo %s = %q, want %q", k, got, v)
		}
	}
}

// checkCapture checks the request record and the target, date and digest
// of the response or revisit record.
func checkCapture(t *testing.T, f testFetch, req, resp readRecord, vc versionCase) {
	t.Helper()
	for _, r := range []readRecord{req, resp} {
		wantHeader(t, r, gowarc.WarcTargetURI, f.c.URL)
		wantHeader(t, r, gowarc.WarcDate, f.c.Date.UTC().Format(vc.dateLayout))
	}
	// With the space, as Heritrix writes it, in every version.
	wantHeader(t, req, gowarc.ContentType, "application/http; msgtype=request")
	wantHeader(t, req, gowarc.WarcConcurrentTo, "<"+resp.id+">")
	if !bytes.Equal(req.block, f.request) {
		t.Errorf("request block = %q, want %q", req.block, f.request)
	}
	wantHeader(t, resp, gowarc.ContentType, "application/http; msgtype=response")
	wantHeader(t, resp, gowarc.WarcIPAddress, f.c.IP)
	wantHeader(t, resp, gowarc.WarcPayloadDigest, sha1Digest(f.entity))
	if resp.typ == gowarc.Response && !bytes.Equal(resp.block, f.raw) {
		t.Errorf("response block differs from the raw response")
	}
}

func checkMetadata(t *testing.T, r readRecord, responseID string) {
	t.Helper()
	wantHeader(t, r, gowarc.WarcConcurrentTo, "<"+responseID+">")
	wantHeader(t, r, gowarc.ContentType, gowarc.ApplicationWarcFields)
	want := "via: http://example.com/\r\nhopsFromSeed: L\r\nsourceTag: seeds-1\r\nfetchTimeMs: 42\r\n" +
		"outlink: http://example.com/a%20b L a/@href\r\n" +
		"outlink: http://example.com/img.png E -\r\n" +
		"outlink: http://example.com/x%0D%0Ay L script\r\n"
	if string(r.block) != want {
		t.Errorf("metadata block = %q, want %q", r.block, want)
	}
	if got := r.fields.GetAll("outlink"); len(got) != 3 || got[1] != "http://example.com/img.png E -" {
		t.Errorf("outlinks parsed by gowarc = %q", got)
	}
}

func checkRevisit(t *testing.T, f testFetch, r, original readRecord, vc versionCase) {
	t.Helper()
	wantHeader(t, r, gowarc.WarcProfile, vc.identical)
	wantHeader(t, r, gowarc.WarcRefersToTargetURI, f.c.Revisit.RefersToURI)
	wantHeader(t, r, gowarc.WarcRefersToDate, original.h.Get(gowarc.WarcDate))
	wantHeader(t, r, gowarc.WarcPayloadDigest, original.h.Get(gowarc.WarcPayloadDigest))
	if !bytes.Equal(r.block, f.header) {
		t.Errorf("revisit block = %q, want the response header %q", r.block, f.header)
	}
	if r.h.Has(gowarc.WarcRefersTo) {
		t.Errorf("WARC-Refers-To = %q, want none (no record id given)", r.h.Get(gowarc.WarcRefersTo))
	}
}

func checkDNS(t *testing.T, r readRecord, answer []byte) {
	t.Helper()
	wantHeader(t, r, gowarc.WarcTargetURI, "dns:example.com")
	wantHeader(t, r, gowarc.ContentType, "text/dns")
	wantHeader(t, r, gowarc.WarcIPAddress, "192.0.2.53")
	if !bytes.Equal(r.block, answer) {
		t.Errorf("dns block = %q, want %q", r.block, answer)
	}
}

// TestChunkedPayloadDigest checks that a chunked response keeps its chunk
// framing in the block while WARC-Payload-Digest is the caller's digest of
// the de-chunked entity.
func TestChunkedPayloadDigest(t *testing.T) {
	dir := t.TempDir()
	w, _ := newTestWriter(t, testConfig(dir))
	f := newFetch("https://example.com/chunked", fetchDate, body(1, 1000), true)
	f.c.Revisit = nil
	if _, err := w.WriteCapture(context.Background(), f.c); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// gowarc digests the payload without removing the transfer coding, so
	// its payload check must only warn here; everything else is strict.
	recs := readAll(t, filepath.Join(dir, warcFiles(t, dir)[0]),
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail), gowarc.WithUnknownRecordTypePolicy(gowarc.ErrFail),
		gowarc.WithBlockErrorPolicy(gowarc.ErrFail), gowarc.WithSpecViolationPolicy(gowarc.ErrWarn),
		gowarc.WithFixDigest(false))
	if len(recs) != 3 {
		t.Fatalf("got %d records, want warcinfo, request, response", len(recs))
	}
	resp := recs[2]
	checkCapture(t, f, recs[1], resp, versionCases()[0])
	if sha1Digest(f.entity) == sha1Digest(f.raw[len(f.header):]) {
		t.Fatal("test body is not chunked")
	}
	if len(resp.validation) != 1 || !strings.Contains(resp.validation[0].Error(), "payload") {
		t.Errorf("validation = %v, want only gowarc's payload digest complaint", resp.validation.String())
	}
	dechunked, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(resp.block[len(f.header):])))
	if err != nil {
		t.Fatal(err)
	}
	wantHeader(t, resp, gowarc.WarcPayloadDigest, sha1Digest(dechunked))
	wantHeader(t, resp, gowarc.WarcBlockDigest, sha1Digest(f.raw))
	for _, r := range recs[:2] {
		if !r.validation.Valid() {
			t.Errorf("%s: %s", r.typ, r.validation.String())
		}
	}
}

// TestRevisitRefersToRecordID checks the optional WARC-Refers-To field and
// the precision of WARC-Refers-To-Date in each version.
func TestRevisitRefersToRecordID(t *testing.T) {
	for _, tc := range []struct{ version, refersToDate string }{
		{"", "2025-03-04T09:11:12Z"},
		{"1.0", "2025-03-04T09:11:12Z"},
		{"1.1", "2025-03-04T09:11:12.345Z"},
	} {
		t.Run(cmp.Or(tc.version, "default"), func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(dir)
			cfg.Version = tc.version
			w, _ := newTestWriter(t, cfg)
			f := newFetch("http://example.com/r", fetchDate, []byte("same"), false)
			f.c.Revisit = &Revisit{RefersToURI: "http://example.com/r", RefersToDate: fetchDate.Add(-time.Hour),
				RefersToRecordID: "<urn:uuid:12345678-1234-4234-8234-123456789abc>"}
			loc, err := w.WriteCapture(context.Background(), f.c)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r := readMember(t, dir, loc)
			wantHeader(t, r, gowarc.WarcType, "revisit")
			wantHeader(t, r, gowarc.WarcRefersTo, "<urn:uuid:12345678-1234-4234-8234-123456789abc>")
			wantHeader(t, r, gowarc.WarcRefersToDate, tc.refersToDate)
			if !r.validation.Valid() {
				t.Error(r.validation.String())
			}
		})
	}
}

// TestRevisitNotModified checks the server-not-modified profile written for
// a 304 answer to a conditional request, with the URI of the version
// written.
func TestRevisitNotModified(t *testing.T) {
	for _, vc := range versionCases() {
		t.Run(vc.name(), func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(dir)
			cfg.Version = vc.setting
			w, _ := newTestWriter(t, cfg)
			f := newFetch("http://example.com/nm", fetchDate, nil, false)
			f.c.Revisit = &Revisit{RefersToURI: "http://example.com/nm", RefersToDate: fetchDate.Add(-time.Hour), NotModified: true}
			loc, err := w.WriteCapture(context.Background(), f.c)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r := readMember(t, dir, loc)
			if r.version != vc.line {
				t.Errorf("version %s, want %s", r.version, vc.line)
			}
			wantHeader(t, r, gowarc.WarcType, "revisit")
			wantHeader(t, r, gowarc.WarcProfile, vc.notModified)
			wantHeader(t, r, gowarc.WarcRefersToTargetURI, "http://example.com/nm")
			wantHeader(t, r, gowarc.ContentType, "application/http; msgtype=response")
		})
	}
}

// TestWARCDateLayout pins the WARC-Date text of each version: Heritrix's 14
// digits for 1.0 (no fraction, which IA's and hanzo's tools reject), and
// milliseconds for 1.1.
func TestWARCDateLayout(t *testing.T) {
	date := time.Date(2026, 1, 2, 3, 4, 5, 678_900_000, time.FixedZone("CET", 3600))
	for _, tc := range []struct{ version, line, want string }{
		{"", "WARC/1.0", "2026-01-02T02:04:05Z"},
		{"1.0", "WARC/1.0", "2026-01-02T02:04:05Z"},
		{"1.1", "WARC/1.1", "2026-01-02T02:04:05.678Z"},
	} {
		t.Run(cmp.Or(tc.version, "default"), func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(dir)
			cfg.Version = tc.version
			w, _ := newTestWriter(t, cfg)
			loc, err := w.WriteDNS(context.Background(), "example.com", date, "192.0.2.53", []byte("20260102020405\n"))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r := readMember(t, dir, loc)
			if r.version != tc.line {
				t.Errorf("version %s, want %s", r.version, tc.line)
			}
			wantHeader(t, r, gowarc.WarcDate, tc.want)
		})
	}
}
