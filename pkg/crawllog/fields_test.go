package crawllog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestFieldRules checks the rules that keep every line at Heritrix's 12
// columns (13 with extra info) whatever the values hold: each case is a
// golden line.
func TestFieldRules(t *testing.T) {
	at := time.Date(2024, 1, 17, 9, 0, 5, 123_000_000, time.UTC)
	base := Entry{
		Logged: at, Status: 200, Size: 42, HTTP: true, URL: "http://a.example/p", HopPath: "L",
		Via: "http://a.example/", MIME: "text/html", Thread: 7, FetchStart: at.Add(-time.Second),
		Duration: 25 * time.Millisecond, Digest: "sha1:AAAA", Source: "tid:1:http://a.example/",
	}
	const head = "2024-01-17T09:00:05.123Z   200         42 "
	tests := []struct {
		name string
		mod  func(*Entry)
		want string // the line after head
	}{
		{"well-formed values are Heritrix's", func(e *Entry) { e.Annotations = []string{"3t", "ip:192.0.2.1"} },
			"http://a.example/p L http://a.example/ text/html #007 20240117090004123+25 sha1:AAAA tid:1:http://a.example/ 3t,ip:192.0.2.1\n"},
		{"clamd reply with spaces", func(e *Entry) { e.Annotations = []string{"stream: Eicar-Test-Signature FOUND"} },
			"http://a.example/p L http://a.example/ text/html #007 20240117090004123+25 sha1:AAAA tid:1:http://a.example/ stream:%20Eicar-Test-Signature%20FOUND\n"},
		{"annotation with comma, tab and newline", func(e *Entry) { e.Annotations = []string{"a,b", "c\td\ne"} },
			"http://a.example/p L http://a.example/ text/html #007 20240117090004123+25 sha1:AAAA tid:1:http://a.example/ a%2Cb,c%09d%0Ae\n"},
		{"empty and repeated annotations left out", func(e *Entry) { e.Annotations = []string{"", "x", "", "x", "y", "x"} },
			"http://a.example/p L http://a.example/ text/html #007 20240117090004123+25 sha1:AAAA tid:1:http://a.example/ x,y\n"},
		{"only empty annotations", func(e *Entry) { e.Annotations = []string{"", ""} },
			"http://a.example/p L http://a.example/ text/html #007 20240117090004123+25 sha1:AAAA tid:1:http://a.example/ -\n"},
		{"URL and via with spaces, controls, DEL", func(e *Entry) {
			e.URL, e.Via = "http://a.example/a b\x7f\x00", "http://a.example/\r\nx y"
		}, "http://a.example/a%20b%7F%00 L http://a.example/%0D%0Ax%20y text/html #007 20240117090004123+25 sha1:AAAA tid:1:http://a.example/ -\n"},
		{"URL keeps its percent escapes and non-ASCII letters", func(e *Entry) { e.URL = "http://a.example/caf%C3%A9/ü" },
			"http://a.example/caf%C3%A9/ü L http://a.example/ text/html #007 20240117090004123+25 sha1:AAAA tid:1:http://a.example/ -\n"},
		{"Unicode spaces and line separators", func(e *Entry) {
			e.Source, e.Annotations = "tid:1:x\u00a0y", []string{"a\u2028b", "c\u0085d", "e\u3000f"}
		}, "http://a.example/p L http://a.example/ text/html #007 20240117090004123+25 sha1:AAAA tid:1:x%C2%A0y a%E2%80%A8b,c%C2%85d,e%E3%80%80f\n"},
		{"source tag, hop path and digest with spaces", func(e *Entry) {
			e.Source, e.HopPath, e.Digest = "my seed list", "L L", "sha1: X"
		}, "http://a.example/p L%20L http://a.example/ text/html #007 20240117090004123+25 sha1:%20X my%20seed%20list -\n"},
		{"empty fields print -", func(e *Entry) {
			e.URL, e.HopPath, e.Via, e.MIME, e.Digest, e.Source = "", "", "", "", "", ""
		}, "- - - no-type #007 20240117090004123+25 - - -\n"},
		{"MIME with a control character", func(e *Entry) { e.MIME = "text/ht\x01ml; charset=x" },
			"http://a.example/p L http://a.example/ text/ht%01ml #007 20240117090004123+25 sha1:AAAA tid:1:http://a.example/ -\n"},
		{"MIME with a line break", func(e *Entry) { e.MIME = "text/html\r\nX-Evil: 1" },
			"http://a.example/p L http://a.example/ no-type #007 20240117090004123+25 sha1:AAAA tid:1:http://a.example/ -\n"},
		{"extra JSON: spaces in strings escaped, between tokens dropped", func(e *Entry) {
			e.Extra = []byte("{ \"scopeDecision\" : \"ACCEPT by rule #2\",\n \"q\": \"say \\\"hi there\\\"\", \"tab\": \"a\tb\", \"nb\": \"x\u00a0y\" }")
		}, "http://a.example/p L http://a.example/ text/html #007 20240117090004123+25 sha1:AAAA tid:1:http://a.example/ - " +
			`{"scopeDecision":"ACCEPT\u0020by\u0020rule\u0020#2","q":"say\u0020\"hi\u0020there\"","tab":"a\u0009b","nb":"x\u00A0y"}` + "\n"},
		{"extra that is not JSON stays one column", func(e *Entry) { e.Extra = []byte("not json at all") },
			"http://a.example/p L http://a.example/ text/html #007 20240117090004123+25 sha1:AAAA tid:1:http://a.example/ - notjsonatall\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := base
			tt.mod(&e)
			got := string(AppendLine(nil, e))
			if want := head + tt.want; got != want {
				t.Errorf("got  %q\nwant %q", got, want)
			}
			wantCols := 12
			if len(e.Extra) > 0 {
				wantCols = 13
			}
			if n := len(strings.Fields(got)); n != wantCols || strings.Count(got, "\n") != 1 {
				t.Errorf("%d columns, %d line ends; want %d and 1: %q", n, strings.Count(got, "\n"), wantCols, got)
			}
		})
	}
}

// The extra column decodes to the same JSON value as the input.
func TestExtraStaysTheSameJSON(t *testing.T) {
	in := map[string]any{"scopeDecision": "ACCEPT by rule #2 X", "n": 3.5, "nested": map[string]any{"a b": "c\u2028d\te"}}
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	col := appendJSON(nil, b)
	if strings.ContainsAny(string(col), " \t\n") {
		t.Fatalf("column has white space: %s", col)
	}
	var got, want any
	if err := json.Unmarshal(col, &got); err != nil {
		t.Fatalf("column %s: %v", col, err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("decoded %s, want %s", gb, wb)
	}
}

// Field rules must not make AppendLine allocate.
func TestAppendLineEscapingDoesNotAllocate(t *testing.T) {
	e := Entry{Logged: time.Now(), URL: "http://a.example/a b\u00a0c", Annotations: []string{"stream: X FOUND", "a,b", "a,b"},
		Extra: []byte(`{"k": "v w"}`)}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf = AppendLine(buf[:0], e) }); n != 0 {
		t.Errorf("%v allocations per line, want 0", n)
	}
}
