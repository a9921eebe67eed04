package messages

import (
	"reflect"
	"testing"
)

// fastPathCases are inputs near the fast path's edges: each must decode the
// same way on both paths (or the fast path must give up).
var fastPathCases = []string{
	`{"url":"http://x/"}`,
	` {"url" : "http://x/" , "status_code" : -5002 } `,
	`{"url":"http://x/","URL":"http://y/"}`,
	`{"Url":"http://x/"}`,
	`{"url":"http://x/","url":"http://y/"}`,
	`{"url":"http://x/\u0041"}`,
	`{"url":"http://x/é","via":"a\"b"}`,
	"{\"url\":\"http://x/\xff\"}",
	`{"url":"http://x/","size":null,"status_code":null,"mimetype":null}`,
	`{"url":"http://x/","size":0,"content_length":-0,"warc_offset":123456789012345678901}`,
	`{"url":"http://x/","size":1e3}`,
	`{"url":"http://x/","size":01}`,
	`{"url":"http://x/","status_code":2147483648}`,
	`{"url":"http://x/","extra_info":{}}`,
	`{"url":"http://x/","extra_info":null}`,
	`{"url":"http://x/","extra_info":[]}`,
	`{"url":"http://x/","extra_info":{"a":[1,2.5e-3,{"b":null}],"a":true,"c":"\u00e9","d":-0.0}}`,
	`{"url":"http://x/","extra_info":{"n":12345678901234567890}}`,
	`{"url":"http://x/","futureField":{"a":["\u00e9\n",1,null,true]}}`,
	`{"url":"http://x/","future\u0046ield":1}`,
	`{"url":"http://x/","ſeed":"s"}`,
	`{"url":"http://x/","content_digest":null,"warc_filename":"f"}`,
	`{"url":"http://x/"}  x`,
	`{"url":"http://x/",}`,
	`{"url":"http://x/" "via":""}`,
	`{"url":"http://x/","hop":"L","headers":{"a":"b","a":"c"},"sheets":[],"isSeed":true,"forceFetch":null}`,
	`{"url":"http://x/","headers":{},"sheets":null,"targetSheet":{"a": [1, 2] ,"b":"x"},"recrawlInterval":3600}`,
	`{"url":"http://x/","targetSheet":{"a":null}}`,
	`{"url":"http://x/","parentUrlMetadata":{"pathFromSeed":"LL","other":1,"heritableData":{"source":"s","heritable":[],"refreshDepth":2,"launch_ts":"2024","x":{"y": [ 1 ]},"annotations":null}}}`,
	`{"url":"http://x/","parentUrlMetadata":{"heritableData":null}}`,
	`{"url":"http://x/","parentUrlMetadata":{"heritableData":{"Source":"s","refreshDepth":1.0}}}`,
	`{"url":"http://x/","parentUrlMetadata":{"heritableData":{"source":"a","source":"b"}}}`,
	`{"url":"http://x/","parentUrlMetadata":null,"method":"POST","timestamp":"2024-01-17"}`,
	`{"url":"http://x/","isSeed":"yes"}`,
	`{"url":"http://x/","hop":"Q"}`,
	`{"url":"a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC\u0000\uFFFF","via":"é\u00e9"}`,
	`{"url":"http://x/\ud83d\ude00"}`,
	`{"url":"http://x/\ud800x"}`,
	`{"url":"http://x/\x"}`,
	`{"url":"http://x/\u12"}`,
	"{\"url\":\"\xc3\\u00a9\"}",
	`{"u\u0072l":"http://x/","extra_info":{"k\n":"\"v\""}}`,
	`[]`,
	`null`,
	``,
}

func TestFastDecodeMatchesEncodingJSON(t *testing.T) {
	inputs := append([]string(nil), fastPathCases...)
	for _, name := range []string{"crawled-events.jsonl", "launch-messages.jsonl"} {
		for _, l := range readLines(t, name) {
			inputs = append(inputs, string(l))
		}
	}
	for _, in := range inputs {
		checkFastCrawled(t, []byte(in))
		checkFastLaunch(t, []byte(in))
	}
}

func checkFastCrawled(t *testing.T, b []byte) {
	t.Helper()
	fast, ok := fastDecodeCrawled(b)
	if !ok {
		return
	}
	var slow Crawled
	if err := decodeStrict(b, &slow); err != nil {
		t.Errorf("crawled fast path accepted %q, encoding/json: %v", b, err)
		return
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("crawled %q: fast path %+v, encoding/json %+v", b, fast, slow)
	}
}

func checkFastLaunch(t *testing.T, b []byte) {
	t.Helper()
	fast, ok := fastDecodeLaunch(b)
	if !ok {
		return
	}
	var slow Launch
	if err := decodeStrict(b, &slow); err != nil {
		t.Errorf("launch fast path accepted %q, encoding/json: %v", b, err)
		return
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("launch %q: fast path %+v, encoding/json %+v", b, fast, slow)
	}
}

func FuzzFastDecode(f *testing.F) {
	for _, in := range fastPathCases {
		f.Add([]byte(in))
	}
	for _, name := range []string{"crawled-events.jsonl", "launch-messages.jsonl"} {
		t := &testing.T{}
		for _, l := range readLines(t, name) {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFastCrawled(t, b)
		checkFastLaunch(t, b)
	})
}
