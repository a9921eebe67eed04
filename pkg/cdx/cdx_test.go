package cdx

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

func goldenEvents(t *testing.T) []messages.Crawled {
	t.Helper()
	f, err := os.Open("testdata/crawled-events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var evs []messages.Crawled
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ev, err := messages.DecodeCrawled(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if len(evs) != 3 {
		t.Fatalf("%d golden events, want 3", len(evs))
	}
	return evs
}

func TestFromCrawledGolden(t *testing.T) {
	evs := goldenEvents(t)
	if l, ok := FromCrawled(evs[0]); ok {
		t.Errorf("Heritrix -5002 event (no WARC location) indexed: %+v", l)
	}

	trawler, ok := FromCrawled(evs[1])
	if !ok {
		t.Fatal("Trawler event not indexed")
	}
	wantCDX11 := "org,example,news)/ 20240117090002 https://news.example.org/ text/html 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - 13107 10422 NPLD-20240117085959123-00001-worker-0.warc.gz"
	if got := trawler.CDX11(); got != wantCDX11 {
		t.Errorf("CDX11 =\n%s\nwant\n%s", got, wantCDX11)
	}
	wantCDXJ := `org,example,news)/ 20240117090002 {"url":"https://news.example.org/","mime":"text/html","status":"200","digest":"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ","length":"13107","offset":"10422","filename":"NPLD-20240117085959123-00001-worker-0.warc.gz"}`
	if got := trawler.CDXJ(); got != wantCDXJ {
		t.Errorf("CDXJ =\n%s\nwant\n%s", got, wantCDXJ)
	}

	proxy, ok := FromCrawled(evs[2])
	if !ok {
		t.Fatal("proxy event not indexed")
	}
	if proxy.URLKey != "net,example,cdn)/lib.js" || proxy.Mimetype != "application/javascript" ||
		proxy.Timestamp != "20240117090005" || proxy.Offset != 2201 || proxy.Length != 3190 || proxy.Status != "200" {
		t.Errorf("proxy line: %+v", proxy)
	}
}

func TestFromCrawledCases(t *testing.T) {
	base := func() messages.Crawled {
		return messages.Crawled{
			Timestamp: "2024-01-17T09:00:03.120Z", URL: "http://www.Example.com/a/?b=1&a=2", StatusCode: 200,
			Mimetype: "text/html; charset=UTF-8", ContentDigest: messages.String("sha1:ABC"),
			WarcFilename: messages.String("f.warc.gz"), WarcOffset: messages.Int64(0), WarcLength: messages.Int64(10),
		}
	}
	l, ok := FromCrawled(base())
	if !ok || l.URLKey != "com,example)/a?a=2&b=1" || l.Mimetype != "text/html" || l.Timestamp != "20240117090003" || l.Digest != "ABC" || l.Offset != 0 {
		t.Errorf("base: %+v %v", l, ok)
	}

	rev := base()
	rev.Annotations = "duplicate:digest,3t"
	if l, _ := FromCrawled(rev); l.Mimetype != RevisitMime {
		t.Errorf("revisit mime = %q", l.Mimetype)
	}
	rev = base()
	rev.WarcType = "revisit"
	if l, _ := FromCrawled(rev); l.Mimetype != RevisitMime {
		t.Errorf("warc_type revisit mime = %q", l.Mimetype)
	}

	dns := base()
	dns.URL, dns.StatusCode, dns.Mimetype = "dns:www.example.com", 1, "text/dns"
	if l, ok := FromCrawled(dns); !ok || l.URLKey != "dns:www.example.com" || l.Status != "200" {
		t.Errorf("dns: %+v %v", l, ok)
	}

	noLen := base()
	noLen.WarcLength = nil
	if l, _ := FromCrawled(noLen); l.Length != -1 || strings.Fields(l.CDX11())[8] != "-" {
		t.Errorf("no length: %+v", l)
	}

	for name, mod := range map[string]func(*messages.Crawled){
		"no filename":        func(c *messages.Crawled) { c.WarcFilename = nil },
		"empty filename":     func(c *messages.Crawled) { c.WarcFilename = messages.String("") },
		"no offset":          func(c *messages.Crawled) { c.WarcOffset = nil },
		"negative offset":    func(c *messages.Crawled) { c.WarcOffset = messages.Int64(-1) },
		"request record":     func(c *messages.Crawled) { c.WarcType = "request" },
		"no CDX key":         func(c *messages.Crawled) { c.URL = "http://example.com:99999/" },
		"no time at all":     func(c *messages.Crawled) { c.Timestamp = "" },
		"metadata record":    func(c *messages.Crawled) { c.WarcType = "metadata" },
		"bad time, no start": func(c *messages.Crawled) { c.Timestamp = "later" },
	} {
		ev := base()
		mod(&ev)
		if l, ok := FromCrawled(ev); ok {
			t.Errorf("%s: indexed %+v", name, l)
		}
	}
	// The fetch start wins over the log timestamp.
	ev := base()
	ev.StartTimePlusDuration = "20240117085959999+3121"
	if l, _ := FromCrawled(ev); l.Timestamp != "20240117085959" {
		t.Errorf("timestamp from fetch start = %q", l.Timestamp)
	}
}

// The lines the live index builds for each kind of capture, checked
// against testdata/record-kinds.cdx11 and .cdxj (the conventions of
// ARCHITECTURE.md section 11, which the offline indexer, pkg/warcindex,
// follows reading the records): a page, a redirect with the event's
// location, both kinds of revisit as warc/revisit with their HTTP status
// and the payload digest the event carries (for a 304, the original's), a
// dns: lookup as status 200 with the digest of its answer, a renderer's
// resource without a status, and a proxy's response. The proxy's request
// and metadata records, and a failed fetch, get no line.
func TestFromCrawledRecordKinds(t *testing.T) {
	data, err := os.ReadFile("testdata/record-kinds.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var cdx11, cdxj []string
	for i, s := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		ev, err := messages.DecodeCrawled([]byte(s))
		if err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
		if l, ok := FromCrawled(ev); ok {
			cdx11, cdxj = append(cdx11, l.CDX11()), append(cdxj, l.CDXJ())
		}
	}
	for _, g := range []struct {
		file string
		got  []string
	}{{"testdata/record-kinds.cdx11", cdx11}, {"testdata/record-kinds.cdxj", cdxj}} {
		want, err := os.ReadFile(g.file)
		if err != nil {
			t.Fatal(err)
		}
		wantLines := strings.Split(strings.TrimSpace(string(want)), "\n")
		if len(g.got) != len(wantLines) {
			t.Errorf("%s: %d lines, want %d:\n%s", g.file, len(g.got), len(wantLines), strings.Join(g.got, "\n"))
			continue
		}
		for i := range wantLines {
			if g.got[i] != wantLines[i] {
				t.Errorf("%s line %d:\n got %s\nwant %s", g.file, i+1, g.got[i], wantLines[i])
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	lines := []Line{
		{URLKey: "com,example)/", Timestamp: "20240117090003", Original: "http://example.com/", Mimetype: "text/html",
			Status: "200", Digest: "ABC", Length: 10, Offset: 0, Filename: "f.warc.gz"},
		{URLKey: "com,example)/x", Timestamp: "20240117090003", Original: "http://example.com/x?a=1&b=<2>", Mimetype: "warc/revisit",
			Redirect: "http://example.com/y", RobotFlags: "A", Length: -1, Offset: 77, Filename: "g.warc.gz"},
		{URLKey: "dns:example.com", Timestamp: "20240117090003", Original: "dns:example.com", Mimetype: "text/dns",
			Length: 300, Offset: 900, Filename: "f.warc.gz"},
	}
	for _, l := range lines {
		for name, s := range map[string]string{"cdx11": l.CDX11(), "cdxj": l.CDXJ()} {
			got, err := Parse(s)
			if err != nil {
				t.Errorf("%s Parse(%s): %v", name, s, err)
				continue
			}
			if got != l {
				t.Errorf("%s round trip of %s:\n got %+v\nwant %+v", name, s, got, l)
			}
		}
	}
	if !strings.Contains(lines[1].CDXJ(), `&b=<2>`) {
		t.Errorf("CDXJ escapes HTML: %s", lines[1].CDXJ())
	}
}

func TestCDXJKeyOrderAndStrings(t *testing.T) {
	l := Line{URLKey: "k", Timestamp: "20240101000000", Original: "u", Mimetype: "m", Status: "301", Digest: "d",
		Redirect: "r", RobotFlags: "f", Length: 1, Offset: 2, Filename: "n"}
	js := strings.SplitN(l.CDXJ(), " ", 3)[2]
	want := `{"url":"u","mime":"m","status":"301","digest":"d","redirect":"r","robotflags":"f","length":"1","offset":"2","filename":"n"}`
	if js != want {
		t.Errorf("CDXJ JSON = %s, want %s", js, want)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range m {
		if _, ok := v.(string); !ok {
			t.Errorf("key %s value %v is not a string", k, v)
		}
	}
}

func TestCDX11SpacesEscaped(t *testing.T) {
	l := Line{URLKey: "k", Timestamp: "20240101000000", Original: "http://x/a b", Length: -1, Offset: -1}
	if n := len(strings.Split(l.CDX11(), " ")); n != 11 {
		t.Errorf("CDX11 with a space has %d fields: %s", n, l.CDX11())
	}
}

func TestParseForeignLines(t *testing.T) {
	// pywb's documentation example and OutbackCDX-style numbers.
	l, err := Parse(`com,example)/ 20160225042329 {"offset":"363","status":"200","length":"1286","mime":"text/html","filename":"example2.warc.gz","url":"http://example.com/","digest":"37cf167c2672a4a64af901d9484e75eee0e2c98a"}`)
	if err != nil || l.Offset != 363 || l.Length != 1286 || l.Original != "http://example.com/" || l.Status != "200" {
		t.Errorf("pywb example: %+v %v", l, err)
	}
	l, err = Parse(`com,example)/ 20160225042329 {"url": "http://example.com/", "statuscode": 200, "mimetype": "text/html", "offset": 5, "length": 9, "redirecturl": "-", "extra": {"x": 1}}`)
	if err != nil || l.Status != "200" || l.Offset != 5 || l.Mimetype != "text/html" || l.Redirect != "" {
		t.Errorf("aliases and numbers: %+v %v", l, err)
	}
	l, err = Parse("au,gov,financeminister)/ 20150914222034 http://www.financeminister.gov.au/ text/html 200 sha1:ZMSA5TNJUKKRYAIM5PRUJLL24DV7QYOO - - 83848 117273 WEB-20150914222031256-00000-43190~heritrix.nla.gov.au~8443.warc.gz\r\n")
	if err != nil || l.Digest != "ZMSA5TNJUKKRYAIM5PRUJLL24DV7QYOO" || l.Offset != 117273 || l.Length != 83848 || l.Redirect != "" {
		t.Errorf("NLA CDX11: %+v %v", l, err)
	}
}

func TestParseBadInput(t *testing.T) {
	tests := []struct{ in, mention string }{
		{"", "fields"},
		{Header11, "header"},
		{"CDX N b a m s k r M S V g", "header"},
		{"com,example)/ 20240101000000 http://example.com/", "3 space-separated fields"},
		{"a b c d e f g h i j k l", "12 space-separated fields"},
		{"k 20240101000000 u m 200 d - - ten 5 f", "length"},
		{"k 20240101000000 u m 200 d - - 10 -5 f", "offset"},
		{"k 2024-01-01 u m 200 d - - 10 5 f", "timestamp"},
		{"k 202401010000001 u m 200 d - - 10 5 f", "timestamp"},
		{"k 20240101000000 u m OK d - - 10 5 f", "status"},
		{"- 20240101000000 u m 200 d - - 10 5 f", "urlkey"},
		{`k 20240101000000 {"url": "u"`, "JSON block"},
		{`k 20240101000000 {"mime": "text/html"}`, `missing "url"`},
		{`k 20240101000000 {"url": "u", "offset": "x"}`, "offset"},
		{`k 20240101000000 {"url": "u", "length": 1.5}`, "length"},
		{`k 20240101000000 {"url": ["u"]}`, `key "url"`},
		{`k {"url": "u"}`, "fields"},
	}
	for _, tt := range tests {
		l, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want error", tt.in, l)
			continue
		}
		if !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("Parse(%q) error %q does not mention %q", tt.in, err, tt.mention)
		}
	}
	if _, err := ParseCDXJ("k 20240101000000 u m 200 d - - 10 5 f"); err == nil {
		t.Error("ParseCDXJ accepted a CDX11 line")
	}
}
