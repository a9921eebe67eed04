package cdxindex

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

// Captures of testdata/semantics.cdx as "urlkey timestamp filename offset"
// (fl=urlkey,timestamp,filename,offset), in index order.
const (
	a1  = "org,a)/ 20050101000000 w1.warc.gz 0"
	a1b = "org,a)/ 20050101000000 w1.warc.gz 500" // same URL and time, another record
	a2  = "org,a)/ 20060101000000 w2.warc.gz 0"
	a3  = "org,a)/ 20060201000000 w2.warc.gz 1000" // 404
	a4  = "org,a)/ 20070101000000 w3.warc.gz 0"    // 301 to https://www.a.org/ (itself)
	a5  = "org,a)/ 20080101000000 w3.warc.gz 1000" // image/png
	pg  = "org,a)/page 20050101000000 w1.warc.gz 2000"
	pgs = "org,a)/page/sub 20050101000000 w1.warc.gz 3000"
	pgz = "org,a)/pages 20050101000000 w1.warc.gz 4000"
	ax  = "org,a)/x 20050101000000 w1.warc.gz 5000"
	sub = "org,a,sub)/ 20050101000000 w1.warc.gz 6000"
	ab  = "org,ab)/ 20050101000000 w1.warc.gz 7000"
	b   = "org,b)/ 20050101000000 w1.warc.gz 8000"
)

func semanticsHandler(t *testing.T) http.Handler {
	t.Helper()
	data, err := os.ReadFile("testdata/semantics.cdx")
	if err != nil {
		t.Fatal(err)
	}
	h := openTest(t).Handler(HandlerOptions{OpenWrites: true})
	mustPost(t, h, "sem", string(data))
	return h
}

func lines(l ...string) string {
	if len(l) == 0 {
		return ""
	}
	return strings.Join(l, "\n") + "\n"
}

func TestQuerySemantics(t *testing.T) {
	h := semanticsHandler(t)
	const fl = "&fl=urlkey,timestamp,filename,offset"
	tests := []struct {
		name, query, want string
	}{
		{"exact", "url=http://a.org/", lines(a1, a1b, a2, a3, a4, a5)},
		{"exact canonicalised", "url=https://www.a.org/", lines(a1, a1b, a2, a3, a4, a5)},
		{"exact explicit", "url=http://a.org/&matchType=exact", lines(a1, a1b, a2, a3, a4, a5)},
		{"exact by urlkey", "urlkey=org,a)/", lines(a1, a1b, a2, a3, a4, a5)},
		{"exact no match", "url=http://a.org/nothing", ""},
		{"exact star is literal", "url=http://a.org/page*&matchType=exact", ""},
		{"reverse", "url=http://a.org/&sort=reverse", lines(a5, a4, a3, a2, a1b, a1)},
		// target 2006-01-29: +3 days, -28 days, +337, -393, -393, +702.
		{"closest", "url=http://a.org/&sort=closest&closest=20060129000000", lines(a3, a2, a4, a1b, a1, a5)},
		// an exact hit first; then 2008 and 2006-01-01 are both 365 days
		// away and the later one wins the tie.
		{"closest tie", "url=http://a.org/&sort=closest&closest=20070101000000", lines(a4, a3, a5, a2, a1b, a1)},
		{"closest limit", "url=http://a.org/&sort=closest&closest=20070101000000&limit=1", lines(a4)},
		{"closest short timestamp", "url=http://a.org/&sort=closest&closest=2007", lines(a4, a3, a5, a2, a1b, a1)},
		{"closest empty is default sort", "url=http://a.org/&sort=closest&closest=", lines(a1, a1b, a2, a3, a4, a5)},
		{"closest missing is default sort", "url=http://a.org/&sort=closest", lines(a1, a1b, a2, a3, a4, a5)},
		{"from", "url=http://a.org/&from=2006", lines(a2, a3, a4, a5)},
		{"to", "url=http://a.org/&to=2006", lines(a1, a1b, a2, a3)},
		{"from to", "url=http://a.org/&from=200602&to=2007", lines(a3, a4)},
		{"from to exact timestamps", "url=http://a.org/&from=20060101000000&to=20070101000000", lines(a2, a3, a4)},
		{"reverse from to", "url=http://a.org/&sort=reverse&from=2006&to=2007", lines(a4, a3, a2)},
		{"reverse to inclusive", "url=http://a.org/&sort=reverse&to=20070101000000", lines(a4, a3, a2, a1b, a1)},
		{"limit", "url=http://a.org/&limit=2", lines(a1, a1b)},
		{"limit zero", "url=http://a.org/&limit=0", ""},
		{"limit negative", "url=http://a.org/&limit=-1", ""},
		{"prefix", "url=http://a.org/page&matchType=prefix", lines(pg, pgs, pgz)},
		{"prefix trailing slash", "url=http://a.org/page/&matchType=prefix", lines(pgs)},
		{"prefix wildcard", "url=http://a.org/page*", lines(pg, pgs, pgz)},
		{"prefix urlkey", "urlkey=org,a)/p&matchType=prefix", lines(pg, pgs, pgz)},
		{"host", "url=a.org&matchType=host", lines(a1, a1b, a2, a3, a4, a5, pg, pgs, pgz, ax)},
		{"host limit", "url=http://a.org/page&matchType=host&limit=3", lines(a1, a1b, a2)},
		{"domain", "url=a.org&matchType=domain", lines(a1, a1b, a2, a3, a4, a5, pg, pgs, pgz, ax, sub)},
		{"domain wildcard", "url=*.a.org", lines(a1, a1b, a2, a3, a4, a5, pg, pgs, pgz, ax, sub)},
		{"domain of subdomain", "url=sub.a.org&matchType=domain", lines(sub)},
		{"range", "url=http://a.org/pages&matchType=range", lines(pgz, ax, sub, ab, b)},
		{"range limit", "urlkey=org,a,sub)/&matchType=range&limit=2", lines(sub, ab)},
		{"filter regex", "url=http://a.org/&filter=status:404", lines(a3)},
		{"filter regex whole value", "url=http://a.org/&filter=status:20", ""},
		{"filter regex pattern", "url=http://a.org/&filter=status:[34].*", lines(a3, a4)},
		{"filter negated", "url=http://a.org/&filter=!status:200", lines(a3, a4)},
		{"filter substring", "url=http://a.org/&filter=~mime:image", lines(a5)},
		{"filter substring negated", "url=http://a.org/&filter=~!mime:text", lines(a5)},
		{"filter substring status", "url=http://a.org/&filter=~status:20", lines(a1, a1b, a2, a5)},
		{"filters repeated", "url=http://a.org/&filter=mimetype:text/.*&filter=!statuscode:200", lines(a3, a4)},
		{"filter filename", "url=http://a.org/&filter=filename:w1.*", lines(a1, a1b)},
		{"filter digest", "url=http://a.org/&filter=digest:B%2B", lines(a2)},
		{"filter redirect", "url=http://a.org/&filter=redirecturl:https://www.a.org/", lines(a4)},
		{"filter length", "url=a.org&matchType=domain&filter=length:10&limit=2", lines(pg, pgs)},
		{"filter urlkey", "url=a.org&matchType=domain&filter=urlkey:.*page.*", lines(pg, pgs, pgz)},
		{"filter on prefix", "url=a.org&matchType=host&filter=~url:page", lines(pg, pgs, pgz)},
		{"filter then limit", "url=http://a.org/&filter=~filename:w3&limit=1", lines(a4)},
		{"collapse", "url=a.org&matchType=host&collapse=urlkey", lines(a1, pg, pgs, pgz, ax)},
		{"collapse year", "url=http://a.org/&collapseToFirst=timestamp:4", lines(a1, a2, a4, a5)},
		{"collapse to last year", "url=http://a.org/&collapseToLast=timestamp:4", lines(a1b, a3, a4, a5)},
		{"omit self redirects", "url=http://a.org/&omitSelfRedirects=true", lines(a1, a1b, a2, a3, a5)},
		{"keep self redirects", "url=http://a.org/&omitSelfRedirects=false", lines(a1, a1b, a2, a3, a4, a5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustGet(t, h, "/sem?"+tc.query+fl); got != tc.want {
				t.Errorf("%s\ngot:\n%swant:\n%s", tc.query, got, tc.want)
			}
		})
	}
}

// Field lists and the three output formats, checked byte for byte against
// OutbackCDX's formats (WbCdxApi: text joins with spaces and prints null as
// "-"; json puts the field names first and numbers unquoted; cdxj always
// starts with urlkey and timestamp and quotes every value).
func TestQueryFieldsAndOutputs(t *testing.T) {
	h := semanticsHandler(t)
	const a4q = "/sem?url=http://a.org/&filter=status:301"
	tests := []struct {
		name, query, want, contentType string
	}{
		{"default fields", a4q, "org,a)/ 20070101000000 http://a.org/ text/html 301 DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD https://www.a.org/ - 1000 0 w3.warc.gz\n", "text/plain"},
		{"fl aliases", a4q + "&fl=original,mimetype,statuscode,redirect", "http://a.org/ text/html 301 https://www.a.org/\n", "text/plain"},
		{"fl range", a4q + "&fl=range,length", "bytes=0-999 1000\n", "text/plain"},
		{"fl CDX14 fields absent", a4q + "&fl=originalLength,originalOffset,originalFilename", "- - -\n", "text/plain"},
		{"unknown output is cdx", a4q + "&fl=status&output=xml", "301\n", "text/plain"},
		{"json fl", a4q + "&fl=url,status,length&output=json", `[["url","status","length"],["http://a.org/",301,1000]]`, "application/json"},
		{"json no rows", "/sem?url=http://none.org/&fl=url,timestamp&output=json", `[["url","timestamp"]]`, "application/json"},
		{"json default fields", a4q + "&output=json", `[["urlkey","timestamp","url","mime","status","digest","redirecturl","robotflags","length","offset","filename"],["org,a)/",20070101000000,"http://a.org/","text/html",301,"DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD","https://www.a.org/","-",1000,0,"w3.warc.gz"]]`, "application/json"},
		{"json two rows", "/sem?url=http://a.org/&fl=timestamp&output=json&limit=2", `[["timestamp"],[20050101000000],[20050101000000]]`, "application/json"},
		{"jsondict", a4q + "&fl=url,status,robotflags&output=jsondict", `[{"url":"http://a.org/","status":301}]`, "application/json"},
		{"jsondict no rows", "/sem?url=http://none.org/&output=jsondict", `[]`, "application/json"},
		{"cdxj default", a4q + "&output=cdxj", `org,a)/ 20070101000000 {"url":"http://a.org/","mime":"text/html","status":"301","digest":"DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD","redirecturl":"https://www.a.org/","length":"1000","offset":"0","filename":"w3.warc.gz"}` + "\n", "text/x-cdxj"},
		{"cdxj fl", a4q + "&output=cdxj&fl=urlkey,timestamp,url", `org,a)/ 20070101000000 {"url":"http://a.org/"}` + "\n", "text/x-cdxj"},
		{"cdxj no rows", "/sem?url=http://none.org/&output=cdxj", "", "text/x-cdxj"},
		{"no rows", "/sem?url=http://none.org/", "", "text/plain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, h, http.MethodGet, tc.query, "")
			if r.status != http.StatusOK || r.body != tc.want {
				t.Errorf("%s: %d\n%q\nwant\n%q", tc.query, r.status, r.body, tc.want)
			}
			if ct := r.header.Get("Content-Type"); ct != tc.contentType {
				t.Errorf("Content-Type %q, want %q", ct, tc.contentType)
			}
		})
	}
}

// The outbackcdx-urlkey header carries the key actually searched.
func TestQueryURLKeyHeader(t *testing.T) {
	h := semanticsHandler(t)
	for q, want := range map[string]string{
		"url=http://www.a.org/":                   "org,a)/",
		"url=http://a.org/page/&matchType=prefix": "org,a)/page/",
		"url=*.a.org":                             "org,a)/",
		"urlkey=org,b)/":                          "org,b)/",
	} {
		if got := do(t, h, http.MethodGet, "/sem?"+q, "").header.Get("outbackcdx-urlkey"); got != want {
			t.Errorf("%s: header %q, want %q", q, got, want)
		}
	}
}

func TestQueryBadInput(t *testing.T) {
	h := semanticsHandler(t)
	tests := []struct {
		query, want string
	}{
		{"fl=url", "exactly one of 'url' or 'urlkey' is required\n"},
		{"url=http://a.org/&urlkey=org,a)/", "exactly one of 'url' or 'urlkey' is required\n"},
		{"url=http://a.org/&url=http://b.org/", "there are multiple values for key url\n"},
		{"url=a.org&matchType=prefix&sort=reverse", "sort=reverse is currently only implemented for exact matches\n"},
		{"url=a.org&matchType=host&sort=closest&closest=2005", "sort=closest is currently only implemented for exact matches\n"},
		{"url=a.org&matchType=domain&from=2005", "from={timestamp} and to={timestamp} are currently only implemented for exact matches\n"},
		{"url=a.org&sort=closest&closest=2005&to=2006", "from={timestamp} and to={timestamp} are currently not implemented for sort=closest queries\n"},
		{"url=a.org&matchType=bogus", "no enum constant outbackcdx.Query.MatchType.BOGUS\n"},
		{"url=a.org&sort=sideways", "no enum constant outbackcdx.Query.Sort.SIDEWAYS\n"},
		{"url=a.org&filter=bogus", "invalid filter: bogus\n"},
		{"url=a.org&filter=nosuch:x", "no such capture field: nosuch\n"},
		{"url=a.org&filter=status:(", "invalid filter status:(: error parsing regexp: missing closing ): `^(?:()$`\n"},
		{"url=a.org&fl=url,bogus", "no such capture field: bogus\n"},
		{"url=a.org&limit=ten", "limit: for input string: \"ten\"\n"},
		{"url=a.org&from=2005x", "timestamp \"2005x\": want digits\n"},
		{"url=a.org&sort=closest&closest=soon", "closest: timestamp \"soon\": want digits\n"},
		{"url=a.org&collapse=nosuch", "no such capture field: nosuch\n"},
		{"url=a.org&collapse=urlkey:x", "collapse \"urlkey:x\": \"x\" is not a length\n"},
		{"url=%zz", "query parameter url: invalid URL escape \"%zz\"\n"},
		{"url=", "url: cdx key: empty URL\n"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			r := do(t, h, http.MethodGet, "/sem?"+tc.query, "")
			if r.status != http.StatusBadRequest || r.body != tc.want {
				t.Errorf("%d %q, want 400 %q", r.status, r.body, tc.want)
			}
		})
	}
}

func TestQueryCollections(t *testing.T) {
	h := semanticsHandler(t)
	r := do(t, h, http.MethodGet, "/nope?url=a.org", "")
	if r.status != http.StatusNotFound || r.body != "Collection nope does not exist" {
		t.Errorf("missing collection: %d %q", r.status, r.body)
	}
	mustPost(t, h, "another-one_2", "")
	r = do(t, h, http.MethodGet, "/api/collections", "")
	if r.status != http.StatusOK || r.body != `["another-one_2","sem"]` || r.header.Get("Content-Type") != "application/json" {
		t.Errorf("collections: %d %q %v", r.status, r.body, r.header)
	}
	if got := mustGet(t, h, "/another-one_2?url=a.org"); got != "" {
		t.Errorf("empty collection answered %q", got)
	}
	r = do(t, h, http.MethodGet, "/sem", "")
	if r.status != http.StatusOK || !strings.Contains(r.body, "Estimated number of records: 13") || r.header.Get("Content-Type") != "text/html" {
		t.Errorf("collection page: %d %q", r.status, r.body)
	}
	r = do(t, h, http.MethodGet, "/sem?q=type:urlquery+url:http%3A%2F%2Fa.org%2F", "")
	if r.status != http.StatusNotImplemented {
		t.Errorf("XML query: %d %q", r.status, r.body)
	}
	for _, target := range []string{"/", "/sem/stats", "/sem/a/b", "/a,b?url=x"} {
		if r := do(t, h, http.MethodGet, target, ""); r.status != http.StatusNotFound || r.body != "Not found\n" {
			t.Errorf("GET %s: %d %q", target, r.status, r.body)
		}
	}
	if r := do(t, h, http.MethodPut, "/sem", "x"); r.status != http.StatusNotFound {
		t.Errorf("PUT: %d %q", r.status, r.body)
	}
}
