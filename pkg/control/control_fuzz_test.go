package control

import (
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// FuzzValidate drives a control message from the topic through everything
// a worker does before touching Redis: decoding, Validate, the SURT
// prefixes it names and, for a delete, the selector it builds. None of it
// may panic, and a prefix that is accepted is a SURT prefix.
func FuzzValidate(f *testing.F) {
	for _, in := range []string{
		`{"command":"pause"}`,
		`{"id":"c-2","command":"resume","scope":"host","host":"www.example.org:8080","by":"ops"}`,
		`{"id":"c-6","command":"seeds","urls":["http://example.com/","https://example.org/a"]}`,
		`{"command":"exclusions","surts":["http://(com,example,","+http://(org,"]}`,
		`{"command":"exclusions","action":"remove","urls":["http://Example.COM/x"]}`,
		`{"command":"sheets","urls":["http://example.com/"],"sheets":["polite"]}`,
		`{"command":"delete","regex":"^http://x/","surts":["http://(com,example,"]}`,
		`{"command":"delete","regex":"(("}`,
		`{"command":"delete","urls":["not a url"]}`,
		`{"command":"terminate","scope":"target","source":"tid:1:http://x/"}`,
	} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := messages.DecodeControl(b)
		if err != nil {
			return
		}
		_ = terminatesPart(c)
		ps, err := Prefixes(c)
		if err == nil {
			for _, p := range ps {
				if p == "" {
					t.Fatalf("%q: empty prefix", b)
				}
			}
		}
		if c.Command != messages.CommandDelete {
			return
		}
		sel, err := Selector(c)
		if err != nil {
			return
		}
		for _, u := range []string{"http://example.com/", "https://www.example.org/a?b", "http://x/", "http://[::1]:80/"} {
			if sel.URL != nil {
				_ = sel.URL(u)
			}
			if sel.Host != nil {
				_ = sel.Host(strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://"))
			}
		}
	})
}
