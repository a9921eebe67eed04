package standalone

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"golang.org/x/net/html"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

// warcRec is one record read back from a WARC file.
type warcRec struct {
	file  string // base name of the file
	index int    // position in the file, warcinfo is 0
	typ   gowarc.RecordType
	h     *gowarc.WarcFields
	block []byte
}

func (r warcRec) get(name string) string { return r.h.Get(name) }

func (r warcRec) String() string {
	return fmt.Sprintf("%s record %d (%s %s)", r.file, r.index, r.typ, r.get(gowarc.WarcTargetURI))
}

var (
	// WARC/1.0, the default, has Heritrix's 14-digit dates: no fraction of
	// a second, which IA's and hanzo's tools would reject.
	warcDateRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	recordIDRE = regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`)
)

// Heritrix's default Accept header, which the fetcher sends.
const heritrixAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// The synthetic web is crawled twice (the second crawl a new launch, with
// unconditional requests), then every record is read back by gowarc with
// strict validation (every block and payload digest checked), and the
// records of one known page and its host are checked field by field against WARC 1.0 and
// what Heritrix3 writes: warcinfo, request, response, metadata (with the
// page's real outlinks), the second crawl's identical-payload-digest
// revisit and the dns: lookup.
func TestWARCRecordsFieldByField(t *testing.T) {
	srv := startSite(t, testweb.Config{Seed: 11, Hosts: 2, PagesPerHost: 15})
	page := knownPage(t, srv)
	body := fetchBody(t, srv, page) // as served at epoch 0, transfer coding removed

	dir := t.TempDir()
	p := testProfile()
	p.Frontier.RecrawlIntervalSeconds = 0
	p.Fetch.SendIfModifiedSince, p.Fetch.SendIfNoneMatch = false, false
	first := runCrawlProfile(t, Config{DataDir: dir, Seeds: srv.Seeds(), Relaunch: true}, srv, p)
	firstFiles := map[string]bool{}
	for _, f := range first.WARCFiles {
		firstFiles[filepath.Base(f)] = true
	}
	srv.SetEpoch(1)
	// The second launch must fall in a later second than the first crawl's
	// end (launch timestamps have 14 digits), as in
	// TestRecrawlWritesRevisitsAndIndexesBoth.
	for next := time.Now().Truncate(time.Second).Add(time.Second); time.Now().Before(next); {
		time.Sleep(10 * time.Millisecond) // waiting for the clock itself, not a condition
	}
	second := runCrawlProfile(t, Config{DataDir: dir, Seeds: srv.Seeds(), Relaunch: true}, srv, p)

	var all []warcRec
	for _, name := range second.WARCFiles {
		recs := readWARCStrict(t, name)
		checkWarcinfo(t, recs, p)
		all = append(all, recs...)
	}
	checkLinks(t, all)
	var inFirst, inSecond []warcRec
	for _, r := range all {
		if firstFiles[r.file] {
			inFirst = append(inFirst, r)
		} else {
			inSecond = append(inSecond, r)
		}
	}

	ip := hostIP(t, srv, page)
	resp := checkCapture(t, inFirst, page, p, ip, body, gowarc.Response)
	checkMetadata(t, inFirst, page, body, srv.Seeds())
	rev := checkCapture(t, inSecond, page, p, ip, body, gowarc.Revisit)
	checkRevisit(t, rev, resp)
	checkDNS(t, inFirst, page, ip, p)
}

// knownPage picks a page of the first seed's host that is not a seed and
// does not change between epochs 0 and 1, so its second capture is a
// revisit.
func knownPage(t *testing.T, srv *testweb.Server) string {
	t.Helper()
	seed, _ := url.Parse(srv.Seeds()[0])
	changed := srv.Changed(0, 1)
	for _, u := range srv.Reachable(testweb.ReachOptions{MaxHops: 20}) {
		pu, err := url.Parse(u)
		if err == nil && pu.Host == seed.Host && strings.HasPrefix(pu.Path, "/sec") &&
			strings.HasSuffix(pu.Path, ".html") && pu.RawQuery == "" && !slices.Contains(changed, u) {
			return u
		}
	}
	t.Fatalf("no unchanging /sec page on %s", seed.Host)
	return ""
}

// fetchBody gets u from the synthetic web as a browser would, without the
// crawler: the entity body after transfer decoding.
func fetchBody(t *testing.T, srv *testweb.Server, u string) []byte {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DialContext: srv.Resolver().DialContext, DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Get(u)
	if err != nil {
		t.Fatalf("fetch %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("fetch %s: HTTP %d, %v", u, resp.StatusCode, err)
	}
	return b
}

func hostIP(t *testing.T, srv *testweb.Server, u string) string {
	t.Helper()
	pu, _ := url.Parse(u)
	ips, err := srv.Resolver().LookupNetIP(context.Background(), "ip4", pu.Hostname())
	if err != nil || len(ips) != 1 {
		t.Fatalf("resolve %s: %v %v", pu.Hostname(), ips, err)
	}
	return ips[0].String()
}

// readWARCStrict reads every record of a WARC file with gowarc's strict
// validation: any syntax error, unknown record type or specification
// violation (Content-Length, block and payload digests) fails the read.
// gowarc digests a chunked payload with its chunk framing, unlike WARC 1.1
// (6.3.2) and the writer, but the fetcher's HTTP/1.0 requests get no
// chunked responses, so every payload digest here is checked by it.
func readWARCStrict(t *testing.T, name string) []warcRec {
	t.Helper()
	r, err := gowarc.NewWarcFileReader(name, 0, gowarc.WithStrictValidation())
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer r.Close()
	var recs []warcRec
	for i := 0; ; i++ {
		rec, _, v, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s record %d: %v", name, i, err)
		}
		if !v.Valid() {
			t.Fatalf("%s record %d: gowarc validation: %v", name, i, v)
		}
		raw, err := rec.Block().RawBytes()
		if err != nil {
			t.Fatalf("%s record %d: block: %v", name, i, err)
		}
		block, err := io.ReadAll(raw)
		if err != nil {
			t.Fatalf("%s record %d: read block: %v", name, i, err)
		}
		wr := warcRec{file: filepath.Base(name), index: i, typ: rec.Type(), h: rec.WarcHeader(), block: block}
		if got := sha1Base32(block); !strings.EqualFold(got, wr.get(gowarc.WarcBlockDigest)) {
			t.Errorf("%s: block digest %s, header %s", wr, got, wr.get(gowarc.WarcBlockDigest))
		}
		recs = append(recs, wr)
	}
	return recs
}

// warcFields parses an application/warc-fields block into its lines, in
// order, failing on anything that is not "Name: value" CRLF.
func warcFields(t *testing.T, r warcRec) [][2]string {
	t.Helper()
	s := string(r.block)
	if !strings.HasSuffix(s, "\r\n") {
		t.Fatalf("%s: warc-fields block does not end with CRLF: %q", r, s)
	}
	var out [][2]string
	for _, line := range strings.Split(strings.TrimSuffix(s, "\r\n"), "\r\n") {
		name, value, ok := strings.Cut(line, ": ")
		if !ok || name == "" || strings.ContainsAny(line, "\r\n") {
			t.Fatalf("%s: bad warc-fields line %q", r, line)
		}
		out = append(out, [2]string{name, value})
	}
	return out
}

// checkWarcinfo checks the warcinfo record that must open every file.
func checkWarcinfo(t *testing.T, recs []warcRec, p profile.Profile) {
	t.Helper()
	if len(recs) == 0 || recs[0].typ != gowarc.Warcinfo {
		t.Fatalf("file does not start with a warcinfo record: %v", recs)
	}
	info := recs[0]
	checkCommon(t, info, "")
	if got := info.get(gowarc.WarcFilename); got != info.file {
		t.Errorf("%s: WARC-Filename %q", info, got)
	}
	if info.h.Has(gowarc.WarcTargetURI) || info.get(gowarc.ContentType) != "application/warc-fields" {
		t.Errorf("%s: Target-URI %q, Content-Type %q", info, info.get(gowarc.WarcTargetURI), info.get(gowarc.ContentType))
	}
	host, _ := os.Hostname()
	// The worker names itself "standalone" and stamps that into the file
	// name and the hostname field; they must agree.
	nameHost := strings.TrimSuffix(info.file[strings.LastIndex(info.file, "-")+1:], ".warc.gz")
	want := [][2]string{
		{"software", "trawler/test (" + host + ")"},
		{"hostname", nameHost},
		{"format", "WARC File Format 1.0"},
		{"conformsTo", "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.0/"},
		{"isPartOf", p.Crawl.Name},
		{"operator", p.Crawl.Operator},
		{"robots", p.Robots.Policy},
		{"http-header-user-agent", p.UserAgent("test")},
	}
	if got := warcFields(t, info); !slices.Equal(got, want) {
		t.Errorf("%s: fields\n%q\nwant\n%q", info, got, want)
	}
	for _, r := range recs[1:] {
		if r.typ == gowarc.Warcinfo {
			t.Errorf("%s: a second warcinfo in the file", r)
		}
	}
}

// checkCommon checks the fields every record has.
func checkCommon(t *testing.T, r warcRec, target string) {
	t.Helper()
	if r.get(gowarc.WarcTargetURI) != target {
		t.Errorf("%s: WARC-Target-URI %q, want %q", r, r.get(gowarc.WarcTargetURI), target)
	}
	if !warcDateRE.MatchString(r.get(gowarc.WarcDate)) {
		t.Errorf("%s: WARC-Date %q", r, r.get(gowarc.WarcDate))
	}
	if !recordIDRE.MatchString(r.get(gowarc.WarcRecordID)) {
		t.Errorf("%s: WARC-Record-ID %q is not <urn:uuid:v4>", r, r.get(gowarc.WarcRecordID))
	}
	if r.get(gowarc.ContentLength) != fmt.Sprint(len(r.block)) {
		t.Errorf("%s: Content-Length %q, block has %d bytes", r, r.get(gowarc.ContentLength), len(r.block))
	}
	if r.get(gowarc.WarcType) != r.typ.String() {
		t.Errorf("%s: WARC-Type %q", r, r.get(gowarc.WarcType))
	}
}

// checkLinks checks that record IDs are unique and that every
// WARC-Concurrent-To names the response or revisit of the same capture:
// a record next to it in the same file, with the same target and date.
func checkLinks(t *testing.T, all []warcRec) {
	t.Helper()
	byID := map[string]warcRec{}
	for _, r := range all {
		id := r.get(gowarc.WarcRecordID)
		if prev, dup := byID[id]; dup {
			t.Errorf("%s and %s share WARC-Record-ID %s", prev, r, id)
		}
		byID[id] = r
	}
	for _, r := range all {
		switch to, ok := byID[r.get(gowarc.WarcConcurrentTo)]; {
		case r.typ != gowarc.Request && r.typ != gowarc.Metadata:
			if r.h.Has(gowarc.WarcConcurrentTo) {
				t.Errorf("%s has WARC-Concurrent-To", r)
			}
		case !ok || (to.typ != gowarc.Response && to.typ != gowarc.Revisit) || to.file != r.file ||
			(to.index-r.index)*(to.index-r.index) > 4 || to.get(gowarc.WarcTargetURI) != r.get(gowarc.WarcTargetURI) ||
			to.get(gowarc.WarcDate) != r.get(gowarc.WarcDate):
			t.Errorf("%s: WARC-Concurrent-To %q is not the capture's response (%v)", r, r.get(gowarc.WarcConcurrentTo), to)
		}
	}
}

// captureOf returns the request, response-or-revisit and metadata of u,
// which must be captured exactly once in recs, in that order in one file.
func captureOf(t *testing.T, recs []warcRec, u string) (req, main, meta warcRec) {
	t.Helper()
	var got []warcRec
	for _, r := range recs {
		if r.get(gowarc.WarcTargetURI) == u {
			got = append(got, r)
		}
	}
	if len(got) != 3 || got[0].typ != gowarc.Request || got[2].typ != gowarc.Metadata ||
		got[0].file != got[2].file || got[2].index-got[0].index != 2 {
		t.Fatalf("%s: records %v, want request, response or revisit, metadata in a row", u, got)
	}
	return got[0], got[1], got[2]
}

// checkCapture checks the request and the response (or revisit) of page
// and returns the latter.
func checkCapture(t *testing.T, recs []warcRec, page string, p profile.Profile, ip string, body []byte,
	mainType gowarc.RecordType) warcRec {
	t.Helper()
	req, main, meta := captureOf(t, recs, page)
	for _, r := range []warcRec{req, main, meta} {
		checkCommon(t, r, page)
		if r.get(gowarc.WarcDate) != main.get(gowarc.WarcDate) {
			t.Errorf("%s: WARC-Date %s, the response's is %s", r, r.get(gowarc.WarcDate), main.get(gowarc.WarcDate))
		}
	}
	for _, r := range []warcRec{req, meta} {
		if r.get(gowarc.WarcConcurrentTo) != main.get(gowarc.WarcRecordID) {
			t.Errorf("%s: WARC-Concurrent-To %q, want %q", r, r.get(gowarc.WarcConcurrentTo), main.get(gowarc.WarcRecordID))
		}
	}

	// The request exactly as Heritrix sends it: HTTP/1.0, Connection: close,
	// the via (from the metadata record) as Referer.
	pu, _ := url.Parse(page)
	wantReq := "GET " + pu.RequestURI() + " HTTP/1.0\r\nHost: " + pu.Host + "\r\nUser-Agent: " + p.UserAgent("test") +
		"\r\nConnection: close\r\nAccept: " + heritrixAccept + "\r\n"
	if via := metadataField(meta.block, "via"); via != "" {
		wantReq += "Referer: " + via + "\r\n"
	} else {
		t.Errorf("%s: the metadata record names no via for a page that is not a seed", meta)
	}
	wantReq += "\r\n"
	if string(req.block) != wantReq {
		t.Errorf("%s: block\n%q\nwant\n%q", req, req.block, wantReq)
	}
	// gowarc adds the payload digest of the request's (empty) entity;
	// Heritrix writes none. Either way it must not be the response's.
	if req.get(gowarc.ContentType) != "application/http; msgtype=request" || req.h.Has(gowarc.WarcIPAddress) ||
		(req.h.Has(gowarc.WarcPayloadDigest) && req.get(gowarc.WarcPayloadDigest) != sha1Base32(nil)) {
		t.Errorf("%s: Content-Type %q, WARC-Payload-Digest %q, WARC-IP-Address %q", req,
			req.get(gowarc.ContentType), req.get(gowarc.WarcPayloadDigest), req.get(gowarc.WarcIPAddress))
	}

	if main.typ != mainType {
		t.Fatalf("%s: want a %s", main, mainType)
	}
	if main.get(gowarc.ContentType) != "application/http; msgtype=response" || main.get(gowarc.WarcIPAddress) != ip {
		t.Errorf("%s: Content-Type %q, WARC-IP-Address %q (want %s)", main, main.get(gowarc.ContentType),
			main.get(gowarc.WarcIPAddress), ip)
	}
	if got, want := main.get(gowarc.WarcPayloadDigest), sha1Base32(body); !strings.EqualFold(got, want) {
		t.Errorf("%s: WARC-Payload-Digest %s, the page served has %s", main, got, want)
	}
	if mainType == gowarc.Response {
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(main.block)), nil)
		if err != nil {
			t.Fatalf("%s: block: %v", main, err)
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
			t.Errorf("%s: HTTP %d, body of %d bytes (%v) differs from the %d served", main, resp.StatusCode, len(got), err, len(body))
		}
	}
	return main
}

// checkRevisit checks the second crawl's revisit of the first response.
func checkRevisit(t *testing.T, rev, orig warcRec) {
	t.Helper()
	want := map[string]string{
		gowarc.WarcProfile:           "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest",
		gowarc.WarcRefersToTargetURI: orig.get(gowarc.WarcTargetURI),
		gowarc.WarcRefersToDate:      orig.get(gowarc.WarcDate),
		gowarc.WarcRefersTo:          orig.get(gowarc.WarcRecordID),
		gowarc.WarcPayloadDigest:     orig.get(gowarc.WarcPayloadDigest),
		gowarc.WarcTruncated:         "length", // the payload is left out, as Heritrix marks it
	}
	for name, v := range want {
		if got := rev.get(name); got != v {
			t.Errorf("%s: %s %q, want %q", rev, name, got, v)
		}
	}
	if rev.get(gowarc.WarcDate) <= orig.get(gowarc.WarcDate) {
		t.Errorf("%s: WARC-Date %s not after the original's %s", rev, rev.get(gowarc.WarcDate), orig.get(gowarc.WarcDate))
	}
	// The block is the HTTP response header only, ending at its blank line.
	end := bytes.Index(rev.block, []byte("\r\n\r\n"))
	if end < 0 || end+4 != len(rev.block) {
		t.Fatalf("%s: block is not an HTTP header alone: %q", rev, rev.block)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rev.block)), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: block: %v", rev, err)
	}
	origResp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(orig.block)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"Content-Type", "ETag", "Last-Modified"} {
		if resp.Header.Get(h) != origResp.Header.Get(h) {
			t.Errorf("%s: %s %q, the original had %q", rev, h, resp.Header.Get(h), origResp.Header.Get(h))
		}
	}
}

// checkMetadata checks the metadata record of page against its first
// capture, the metadata of the page it was found on, and the links the
// page really has.
func checkMetadata(t *testing.T, recs []warcRec, page string, body []byte, seeds []string) {
	t.Helper()
	_, _, meta := captureOf(t, recs, page)
	if meta.get(gowarc.ContentType) != "application/warc-fields" {
		t.Errorf("%s: Content-Type %q", meta, meta.get(gowarc.ContentType))
	}
	fields := warcFields(t, meta)
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		if len(names) == 0 || names[len(names)-1] != f[0] {
			names = append(names, f[0])
		}
	}
	if want := []string{"via", "hopsFromSeed", "sourceTag", "fetchTimeMs", "outlink"}; !slices.Equal(names, want) {
		t.Fatalf("%s: fields %q, want %q in that order", meta, names, want)
	}
	via, hops, source, ms := fields[0][1], fields[1][1], fields[2][1], fields[3][1]
	if _, err := time.ParseDuration(ms + "ms"); err != nil || strings.HasPrefix(ms, "-") {
		t.Errorf("%s: fetchTimeMs %q", meta, ms)
	}
	if !slices.Contains(seeds, source) {
		t.Errorf("%s: sourceTag %q is not a seed", meta, source)
	}

	// The via page lists this page as an outlink with the last hop of
	// hopsFromSeed, and passed on its own path and source tag.
	_, _, viaMeta := captureOf(t, recs, via)
	viaFields := warcFields(t, viaMeta)
	viaHops, viaSource := fieldValue(viaFields, "hopsFromSeed"), fieldValue(viaFields, "sourceTag")
	if slices.Contains(seeds, via) {
		viaSource = via
	}
	if hops == "" || hops != viaHops+hops[len(hops)-1:] || source != viaSource {
		t.Errorf("%s: hopsFromSeed %q, sourceTag %q; via %s has %q, %q", meta, hops, source, via, viaHops, viaSource)
	}
	if !slices.ContainsFunc(viaFields, func(f [2]string) bool {
		return f[0] == "outlink" && strings.HasPrefix(f[1], page+" "+hops[len(hops)-1:]+" ")
	}) {
		t.Errorf("%s: via %s has no outlink to it with hop %s", meta, via, hops[len(hops)-1:])
	}

	var got []outlink
	for _, f := range fields[4:] {
		words := strings.Split(f[1], " ")
		if len(words) != 3 {
			t.Fatalf("%s: outlink %q is not URL HOP CONTEXT", meta, f[1])
		}
		got = append(got, outlink{url: words[0], hop: words[1], context: words[2]})
	}
	want := pageOutlinks(t, page, body)
	if len(got) != len(want) {
		t.Errorf("%s: %d outlinks, the page has %d:\ngot  %v\nwant %v", meta, len(got), len(want), got, want)
	}
	for _, w := range want {
		i := slices.IndexFunc(got, func(o outlink) bool { return o.url == w.url && o.hop == w.hop })
		if i < 0 {
			t.Errorf("%s: no outlink %s %s (%s)", meta, w.url, w.hop, w.context)
			continue
		}
		// Heritrix's context is element/@attribute; the writer may qualify
		// the element (link[rel='stylesheet']).
		if c := got[i].context; c != w.context && !(strings.HasPrefix(c, w.element+"[") && strings.HasSuffix(c, "/@"+w.attr)) {
			t.Errorf("%s: outlink %s context %q, want %q", meta, w.url, c, w.context)
		}
	}
}

func fieldValue(fields [][2]string, name string) string {
	for _, f := range fields {
		if f[0] == name {
			return f[1]
		}
	}
	return ""
}

// outlink is one outlink line; element and attr are the oracle's.
type outlink struct {
	url, hop, context string
	element, attr     string
}

// pageOutlinks finds the links of an HTML page independently of the
// crawler's extractor: a/@href and base/@href navigational (L), link
// rel=stylesheet, script/@src, img/@src and img/@srcset embeds (E), resolved
// against the first <base href>, in-page anchors and non-http(s) references
// dropped, one per URL and hop.
func pageOutlinks(t *testing.T, page string, body []byte) []outlink {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse %s: %v", page, err)
	}
	base, baseSet := page, false
	var out []outlink
	add := func(ref, hop, element, attr string) {
		ref = strings.TrimSpace(ref)
		if strings.HasPrefix(ref, "#") {
			return // an in-page anchor is no outlink
		}
		abs, err := uri.Resolve(base, ref)
		if err != nil {
			return // mailto:, javascript:
		}
		if !slices.ContainsFunc(out, func(o outlink) bool { return o.url == abs && o.hop == hop }) {
			out = append(out, outlink{url: abs, hop: hop, context: element + "/@" + attr, element: element, attr: attr})
		}
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			attrs := map[string]string{}
			for _, a := range n.Attr {
				attrs[a.Key] = a.Val
			}
			switch n.Data {
			case "base":
				add(attrs["href"], "L", "base", "href")
				if abs, err := uri.Resolve(base, strings.TrimSpace(attrs["href"])); err == nil && !baseSet {
					base, baseSet = abs, true
				}
			case "a":
				if href, ok := attrs["href"]; ok {
					add(href, "L", "a", "href")
				}
			case "link":
				if attrs["rel"] == "stylesheet" {
					add(attrs["href"], "E", "link", "href")
				}
			case "script":
				if src, ok := attrs["src"]; ok {
					add(src, "E", "script", "src")
				}
			case "img":
				add(attrs["src"], "E", "img", "src")
				for _, cand := range strings.Split(attrs["srcset"], ",") {
					if f := strings.Fields(cand); len(f) > 0 {
						add(f[0], "E", "img", "srcset")
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

// checkDNS checks the dns: record of page's host: a response of type
// text/dns whose block is the lookup time and the A record, as Heritrix's
// FetchDNS writes it.
func checkDNS(t *testing.T, recs []warcRec, page, ip string, p profile.Profile) {
	t.Helper()
	pu, _ := url.Parse(page)
	target := "dns:" + pu.Hostname()
	var got []warcRec
	for _, r := range recs {
		if r.get(gowarc.WarcTargetURI) == target {
			got = append(got, r)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%s: %d records in the first crawl, want 1", target, len(got))
	}
	r := got[0]
	checkCommon(t, r, target)
	if r.typ != gowarc.Response || r.get(gowarc.ContentType) != "text/dns" || r.h.Has(gowarc.WarcPayloadDigest) {
		t.Errorf("%s: Content-Type %q, WARC-Payload-Digest %q", r, r.get(gowarc.ContentType), r.get(gowarc.WarcPayloadDigest))
	}
	// The test resolver is no name server: there is no server address.
	if r.h.Has(gowarc.WarcIPAddress) {
		t.Errorf("%s: WARC-IP-Address %q from a static resolver", r, r.get(gowarc.WarcIPAddress))
	}
	date, err := time.Parse(time.RFC3339Nano, r.get(gowarc.WarcDate))
	if err != nil {
		t.Fatalf("%s: WARC-Date: %v", r, err)
	}
	name := pu.Hostname() + "."
	pad := ""
	switch {
	case len(name) < 8:
		pad = "\t\t"
	case len(name) < 16:
		pad = "\t"
	}
	want := fmt.Sprintf("%s\n%s%s\t%d\tIN\tA\t%s\n", date.UTC().Format("20060102150405"), name, pad,
		p.DNS.IPValidityDurationSeconds, ip)
	if string(r.block) != want {
		t.Errorf("%s: block\n%q\nwant\n%q", r, r.block, want)
	}
}

// metadataField is the value of the first "name: value" line of a metadata
// record's block; "" when there is none.
func metadataField(block []byte, name string) string {
	for line := range strings.SplitSeq(string(block), "\r\n") {
		if v, ok := strings.CutPrefix(line, name+": "); ok {
			return v
		}
	}
	return ""
}
