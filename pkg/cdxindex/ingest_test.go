package cdxindex

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

const (
	goodLine = "- 20200101000000 http://good.org/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 10 0 f.warc.gz"
	// From OutbackCDX's WebappTest: a status that is not a number.
	badWolf = "- 20060614070159 http://nla.gov.au/bad-wolf text/html bad-wolf XKMCCEPOOWFMGGO5635HFZXGFRLRGWIX - - - 337023 NLA-AU-CRAWL-000-20050614070144-00003-crawling016.archive.org"
)

func TestIngestBadLines(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"bad status", goodLine + "\n" + badWolf + "\n", "At line: " + badWolf + "\nline 2: status \"bad-wolf\" is not an integer\n"},
		{"too few fields", "- 20200101000000 http://x.org/ text/html\n", "At line: - 20200101000000 http://x.org/ text/html\nline 1: 4 space-separated fields, want 9, 10, 11 or 14\n"},
		{"blank line", goodLine + "\n\n" + goodLine + "\n", "At line: \nline 2: 0 space-separated fields, want 9, 10, 11 or 14\n"},
		{"long timestamp", "- 202001010000000 http://x.org/ - 200 - - - - 0 f\n", "At line: - 202001010000000 http://x.org/ - 200 - - - - 0 f\nline 1: timestamp \"202001010000000\": want up to 14 digits\n"},
		{"bad offset", "- 20200101000000 http://x.org/ - 200 - - - 5 - f\n", "At line: - 20200101000000 http://x.org/ - 200 - - - 5 - f\nline 1: offset \"-\" is not an integer\n"},
		{"bad length", "- 20200101000000 http://x.org/ - 200 - - - x 0 f\n", "At line: - 20200101000000 http://x.org/ - 200 - - - x 0 f\nline 1: length \"x\" is not an integer\n"},
		{"cdxj bad json", "- 20200101000000 {\"url\": \n", "At line: - 20200101000000 {\"url\": \nline 1: invalid JSON in CDXJ line: unexpected EOF\n"},
		{"cdxj no url", "- 20200101000000 {\"mime\": \"text/html\"}\n", "At line: - 20200101000000 {\"mime\": \"text/html\"}\nline 1: missing 'url' field in CDXJ line\n"},
		{"cdxj number as string field", "- 20200101000000 {\"url\": \"http://x.org/\", \"mime\": 5}\n", "At line: - 20200101000000 {\"url\": \"http://x.org/\", \"mime\": 5}\nline 1: field mime: want a string, got 5\n"},
		{"cdxj float length", "- 20200101000000 {\"url\": \"http://x.org/\", \"length\": 1.5}\n", "At line: - 20200101000000 {\"url\": \"http://x.org/\", \"length\": 1.5}\nline 1: length \"1.5\" is not an integer\n"},
		{"alias", "@alias http://a.org/ http://b.org/\n", "At line: @alias http://a.org/ http://b.org/\nline 1: @alias lines are not supported by this index\n"},
		{"nul in filename", "- 20200101000000 http://x.org/ - 200 - - - 1 0 a\x00b\n", "At line: - 20200101000000 http://x.org/ - 200 - - - 1 0 a\x00b\nline 1: filename \"a\\x00b\" contains a NUL byte\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t)
			h := ix.Handler(HandlerOptions{OpenWrites: true})
			r := do(t, h, http.MethodPost, "/c", tc.body)
			if r.status != http.StatusBadRequest || r.body != tc.want {
				t.Errorf("got %d %q\nwant 400 %q", r.status, r.body, tc.want)
			}
			if n, ok := ix.Count("c"); ok || n != 0 {
				t.Errorf("a rejected POST wrote %d entries (collection created: %v)", n, ok)
			}
			r = do(t, h, http.MethodPost, "/c?badLines=skip", tc.body)
			wantGood := strings.Count(tc.body, goodLine)
			if r.status != http.StatusOK || r.body != "Added "+strconv.Itoa(wantGood)+" records\n" {
				t.Errorf("badLines=skip: %d %q, want %d added", r.status, r.body, wantGood)
			}
		})
	}
}

// Every line shape OutbackCDX's Capture.fromCdxLine reads, and the values
// it stores for absent fields.
func TestIngestLineShapes(t *testing.T) {
	body := strings.Join([]string{
		" CDX N b a m s k r M S V g",
		"- 20200101000000 http://s9.org/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - 100 nine.warc.gz",
		"- 20200101000000 http://s10.org/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - NOFOLLOW 100 ten.warc.gz",
		"- 20200101000000 http://s14.org/ warc/revisit 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 50 100 rev.warc.gz 900 10 orig.warc.gz",
		"- 20200101000000 http://s14b.org/ warc/revisit 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 50 100 rev.warc.gz - - orig.warc.gz",
		"ignored,key 20200101000000 dns:dns.org text/dns - - - - 50 0 dns.warc.gz",
		"- 2020 http://short.org/ text/html 200 m5orm4xq5qcezedrnzrgswxpcoguvasi - - 1 2 f",
		`- 20200101000000 {"url": "http://j.org/", "offset": "5", "filename": "f"}`,
		`- 20200101000000 {"url": "http://jn.org/", "status": 200, "length": 7, "offset": 5, "filename": "f", "mime": null, "method": "GET"} trailing`,
	}, "\r\n") + "\r"
	h := openTest(t).Handler(HandlerOptions{OpenWrites: true})
	if r := do(t, h, http.MethodPost, "/s", body); r.status != 200 || r.body != "Added 8 records\n" {
		t.Fatalf("POST: %d %q", r.status, r.body)
	}
	tests := []struct{ query, want string }{
		{"url=http://s9.org/", "org,s9)/ 20200101000000 http://s9.org/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - - 100 nine.warc.gz\n"},
		{"url=http://s10.org/", "org,s10)/ 20200101000000 http://s10.org/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - NOFOLLOW - 100 ten.warc.gz\n"},
		{"url=http://s14.org/&fl=originalLength,originalOffset,originalFilename,length", "900 10 orig.warc.gz 50\n"},
		{"url=http://s14.org/&fl=originalLength,originalOffset&output=json", `[["originalLength","originalOffset"],[900,10]]`},
		// OutbackCDX reads "-" in the CDX14 fields as 0.
		{"url=http://s14b.org/&fl=originalLength,originalOffset", "0 0\n"},
		// Status "-" is stored as 0, digest "-" comes back empty, and the
		// urlkey field of the line is ignored.
		{"url=dns:dns.org", "dns:dns.org 20200101000000 dns:dns.org text/dns 0  - - 50 0 dns.warc.gz\n"},
		{"url=dns:dns.org&output=json", `[["urlkey","timestamp","url","mime","status","digest","redirecturl","robotflags","length","offset","filename"],["dns:dns.org",20200101000000,"dns:dns.org","text/dns",0,"","-","-",50,0,"dns.warc.gz"]]`},
		{"url=dns:dns.org&output=cdxj", `dns:dns.org 20200101000000 {"url":"dns:dns.org","mime":"text/dns","status":"0","digest":"","length":"50","offset":"0","filename":"dns.warc.gz"}` + "\n"},
		// A short timestamp is zero-padded; a lower-case digest comes back
		// upper-case.
		{"url=http://short.org/", "org,short)/ 20200000000000 http://short.org/ text/html 200 M5ORM4XQ5QCEZEDRNZRGSWXPCOGUVASI - - 1 2 f\n"},
		// CDXJ without status: -1; without mime: "-".
		{"url=http://j.org/", "org,j)/ 20200101000000 http://j.org/ - -1  - - - 5 f\n"},
		{"url=http://j.org/&output=cdxj", `org,j)/ 20200101000000 {"url":"http://j.org/","status":"-1","digest":"","offset":"5","filename":"f"}` + "\n"},
		{"url=http://jn.org/", "org,jn)/ 20200101000000 http://jn.org/ - 200  - - 7 5 f\n"},
	}
	for _, tc := range tests {
		if got := mustGet(t, h, "/s?"+tc.query); got != tc.want {
			t.Errorf("%s:\n%q\nwant\n%q", tc.query, got, tc.want)
		}
	}
}

// JSON strings are escaped as Jackson escapes them.
func TestIngestJSONEscaping(t *testing.T) {
	h := openTest(t).Handler(HandlerOptions{OpenWrites: true})
	line := `- 20200101000000 {"url": "http://esc.org/a\"b\\c\u0001\t\u2028é/<&>", "mime": "text/html", "offset": "0", "filename": "f"}`
	mustPost(t, h, "e", line)
	got := mustGet(t, h, "/e?url=esc.org&matchType=domain&fl=url&output=json")
	want := "[[\"url\"],[\"http://esc.org/a\\\"b\\\\c\\u0001\\t\u2028é/<&>\"]]"
	if got != want {
		t.Errorf("json:\n%s\nwant\n%s", got, want)
	}
	got = mustGet(t, h, "/e?url=esc.org&matchType=domain&fl=url&output=cdxj")
	if !strings.HasSuffix(got, " {\"url\":\"http://esc.org/a\\\"b\\\\c\\u0001\\t\u2028é/<&>\"}\n") {
		t.Errorf("cdxj: %q", got)
	}
}

func TestIngestIdempotentAndDelete(t *testing.T) {
	ix := openTest(t)
	h := ix.Handler(HandlerOptions{OpenWrites: true})
	two := goodLine + "\n" + strings.Replace(goodLine, " 0 f.warc.gz", " 10 f.warc.gz", 1) + "\n"
	mustPost(t, h, "d", two)
	mustPost(t, h, "d", two+goodLine) // redelivery: no new entries
	if n, _ := ix.Count("d"); n != 2 {
		t.Fatalf("count %d after duplicate POSTs, want 2", n)
	}
	if got := mustGet(t, h, "/d?url=http://good.org/&fl=offset"); got != "0\n10\n" {
		t.Fatalf("after duplicates: %q", got)
	}
	// Delete matches on URL key, time, file and offset only.
	del := strings.Replace(goodLine, "text/html 200", "image/gif 404", 1) + "\n- 19990101000000 http://never.org/ - - - - - 1 2 f\n"
	if r := do(t, h, http.MethodPost, "/d/delete", del); r.status != 200 || r.body != "Deleted 2 records\n" {
		t.Fatalf("delete: %d %q", r.status, r.body)
	}
	if got := mustGet(t, h, "/d?url=http://good.org/&fl=offset"); got != "10\n" {
		t.Errorf("after delete: %q", got)
	}
	if n, _ := ix.Count("d"); n != 1 {
		t.Errorf("count %d after delete, want 1", n)
	}
	// recanonicalize=0 uses the line's own urlkey.
	own := "org,good)/ 20200101000000 http://GOOD.org/other text/html 200 - - - 10 10 f.warc.gz"
	if r := do(t, h, http.MethodPost, "/d/delete?recanonicalize=0", own); r.status != 200 || r.body != "Deleted 1 records\n" {
		t.Fatalf("delete recanonicalize=0: %d %q", r.status, r.body)
	}
	if got := mustGet(t, h, "/d?url=http://good.org/"); got != "" {
		t.Errorf("after delete with own key: %q", got)
	}
	if r := do(t, h, http.MethodPost, "/d/delete", badWolf); r.status != 400 || !strings.HasPrefix(r.body, "At line: "+badWolf+"\n") {
		t.Errorf("bad delete line: %d %q", r.status, r.body)
	}
	if r := do(t, h, http.MethodPost, "/nope/delete", goodLine); r.status != 404 || r.body != "Collection nope does not exist" {
		t.Errorf("delete from missing collection: %d %q", r.status, r.body)
	}
}

func TestIngestOptionsAndNames(t *testing.T) {
	ix := openTest(t)
	ro := ix.Handler(HandlerOptions{ReadOnly: true})
	for _, target := range []string{"/c", "/c/delete"} {
		if r := do(t, ro, http.MethodPost, target, goodLine); r.status != http.StatusForbidden {
			t.Errorf("read-only POST %s: %d %q", target, r.status, r.body)
		}
	}
	small := ix.Handler(HandlerOptions{MaxBodyBytes: 50, OpenWrites: true})
	if r := do(t, small, http.MethodPost, "/c", goodLine+"\n"+goodLine); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d %q", r.status, r.body)
	}
	h := ix.Handler(HandlerOptions{OpenWrites: true})
	if r := do(t, h, http.MethodPost, "/a.b", goodLine); r.status != http.StatusBadRequest || r.body != "Invalid collection name\n" {
		t.Errorf("bad collection name: %d %q", r.status, r.body)
	}
	if got := ix.Collections(); len(got) != 0 {
		t.Errorf("collections after rejected writes: %v", got)
	}
}
