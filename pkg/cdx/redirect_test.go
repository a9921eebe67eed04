package cdx

import (
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// The live redirect field comes from the event's extra_info location,
// resolved against the URL; anything else leaves it empty.
func TestFromCrawledRedirect(t *testing.T) {
	const base = `"timestamp":"2024-01-17T09:00:03.120Z","start_time_plus_duration":"20240117090002801+299","warc_filename":"f.warc.gz","warc_offset":5,"warc_length":10`
	for _, tc := range []struct{ name, event, want string }{
		{"absolute", `{"url":"http://a.example/x","status_code":301,"extra_info":{"location":"https://www.a.example/x"},` + base + `}`, "https://www.a.example/x"},
		{"relative from another producer", `{"url":"http://a.example/dir/x","status_code":302,"extra_info":{"location":"../y?q=1"},` + base + `}`, "http://a.example/y?q=1"},
		{"no location", `{"url":"http://a.example/x","status_code":301,` + base + `}`, ""},
		{"not a redirect", `{"url":"http://a.example/x","status_code":200,"extra_info":{"location":"/y"},` + base + `}`, ""},
		{"not a string", `{"url":"http://a.example/x","status_code":301,"extra_info":{"location":7},` + base + `}`, ""},
		{"spaces are encoded", `{"url":"http://a.example/x","status_code":301,"extra_info":{"location":"/a b"},` + base + `}`, "http://a.example/a%20b"},
		{"unresolvable with spaces", `{"url":"http://a.example/x","status_code":301,"extra_info":{"location":"http://[bad host/a b"},` + base + `}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := messages.DecodeCrawled([]byte(tc.event))
			if err != nil {
				t.Fatal(err)
			}
			l, ok := FromCrawled(ev)
			if !ok || l.Redirect != tc.want {
				t.Errorf("redirect %q (ok %v), want %q", l.Redirect, ok, tc.want)
			}
		})
	}
}
