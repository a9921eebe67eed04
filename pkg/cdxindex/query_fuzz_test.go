package cdxindex

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
)

// FuzzQuery sends fuzzed query strings to the CDX API over a small index
// (testdata/semantics.cdx). Every query is answered, never with a 500:
// a 400 that says why, or a 200 whose body is well-formed for the output
// asked for, with no more captures than the collection holds.
func FuzzQuery(f *testing.F) {
	data, err := os.ReadFile("testdata/semantics.cdx")
	if err != nil {
		f.Fatal(err)
	}
	captures := strings.Count(strings.TrimSpace(string(data)), "\n") + 1
	// The queries of the semantics tests are the seeds.
	src, err := os.ReadFile("query_test.go")
	if err != nil {
		f.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\{"[^"]*", "((?:url|urlkey)=[^"]*)"`).FindAllSubmatch(src, -1) {
		f.Add(string(m[1]))
	}
	for _, q := range []string{
		"url=http://a.org/&output=json", "url=http://a.org/&output=jsondict&fl=urlkey,filename",
		"url=http://a.org/&output=cdxj", "url=*.a.org&filter=!status:2..&collapse=urlkey:3",
		"url=http://a.org/&filter=~mime:IMAGE&collapseToLast=digest", "url=http://a.org/&fl=nope",
		"url=%zz", "url=http://a.org/&limit=x", "url=http://a.org/&limit=1&limit=2", "q=type:urlquery",
		"urlkey=org,a)/&matchType=range", "url=http://a.org/&filter=status:(((", "url=a.org&from=2006&to=2005",
	} {
		f.Add(q)
	}
	ix := openTest(f)
	h := ix.Handler(HandlerOptions{ScanCap: 1000, OpenWrites: true})
	mustPost(f, h, "sem", string(data))
	f.Fuzz(func(t *testing.T, rawQuery string) {
		req := httptest.NewRequest(http.MethodGet, "/sem", nil)
		req.URL.RawQuery = rawQuery
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body := rec.Body.String()
		switch rec.Code {
		case http.StatusOK, http.StatusNotImplemented:
		case http.StatusBadRequest:
			if strings.TrimSpace(body) == "" {
				t.Fatalf("400 without a reason for %q", rawQuery)
			}
			return
		default:
			t.Fatalf("query %q: status %d: %s", rawQuery, rec.Code, body)
		}
		if rec.Code != http.StatusOK {
			return
		}
		ct := rec.Header().Get("Content-Type")
		switch ct {
		case "application/json":
			if !json.Valid([]byte(body)) {
				t.Fatalf("query %q: invalid JSON answer %q", rawQuery, body)
			}
		case "text/x-cdxj", "text/plain":
			lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
			if body == "" {
				lines = nil
			}
			if len(lines) > captures {
				t.Fatalf("query %q: %d lines from %d captures", rawQuery, len(lines), captures)
			}
			for _, l := range lines {
				if strings.HasPrefix(l, "warning: ") {
					t.Fatalf("query %q: %s", rawQuery, l)
				}
				if ct != "text/x-cdxj" {
					if strings.Count(l, " ") != strings.Count(lines[0], " ") {
						t.Fatalf("query %q: lines with different field counts:\n%s", rawQuery, body)
					}
					continue
				}
				parts := strings.SplitN(l, " ", 3)
				if len(parts) != 3 || !json.Valid([]byte(parts[2])) {
					t.Fatalf("query %q: bad CDXJ line %q", rawQuery, l)
				}
			}
		case "text/html":
			// The collection page, for a query without parameters.
		default:
			t.Fatalf("query %q: Content-Type %q", rawQuery, ct)
		}
	})
}
