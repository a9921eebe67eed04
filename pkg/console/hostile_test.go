package console

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// hostileURL has quotes, angle brackets and a script, as a crawled page
// may link to.
const hostileURL = `http://h.test/q"uote'<script>alert(1)</script>.html`

// Crawled URLs and host names are shown as text, never markup: in the
// host page's queue, the crawl.log tail and a page title, a script tag
// and quotes come out escaped, and no attribute is broken out of.
func TestHostileInputRendersAsText(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	res, err := h.f.Admit(ctx, []frontier.Candidate{{Launch: messages.Launch{URL: hostileURL, IsSeed: true},
		Policy: frontier.PolicyOf(profile.Default())}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("admit: %v %+v", err, res)
	}
	line := "2026-11-28T07:00:00.000Z   200       1234 " + hostileURL + " L http://h.test/ text/html #001 - sha1:X - - -\n"
	if err := os.WriteFile(filepath.Join(h.logDir, "crawl.log"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	cl := h.client()
	h.login(cl, operatorToken)
	for _, p := range []string{"host?h=h.test", "log", "log?q=" + url.QueryEscape(`"uote'<script>`), `host?h="><svg>`} {
		code, body, _ := h.do(cl, "GET", Prefix+p, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, code, body)
		}
		for _, raw := range []string{"<script>alert", `"><svg>`, `q"uote'<`} {
			if strings.Contains(body, raw) {
				t.Errorf("GET %s: %q unescaped in the page", p, raw)
			}
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") && !strings.Contains(body, "&#34;&gt;&lt;svg&gt;") {
			t.Errorf("GET %s: the hostile text is not shown escaped:\n%s", p, body)
		}
	}
}

// Bad input gets a clear answer with the reason, never a crash: a bad
// host, line count, launch or report name, and control forms that are
// invalid or lack their confirmation; junk lines in crawl.log are skipped.
func TestBadInput(t *testing.T) {
	sent := 0
	h := newHarness(t, harnessOptions{deps: func(d *Deps) {
		d.API.Send = func(_ context.Context, _ messages.Control) (string, error) { sent++; return "id1", nil }
	}})
	junk := "short line\n\x00\xff\xfe binary\n" + strings.Repeat("x", 100) + "\n" +
		"2026-11-28T07:00:00.000Z 404 0 http://a.test/missing - - text/html #001 - - - - -\n"
	if err := os.WriteFile(filepath.Join(h.logDir, "crawl.log"), []byte(junk+"partial line without newline"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(h.c.d.Files.ReportsDir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	cl := h.client()
	csrf := h.login(cl, operatorToken)
	for _, tt := range []struct {
		path string
		want int
		says string
	}{
		{"host", 400, "want ?h=host[:port], got nothing"},
		{"host?h=a%20b", 400, `got &#34;a b&#34;`},
		{"log?n=abc", 400, "n=&#34;abc&#34; is not a positive number"},
		{"log?n=0", 400, "is not a positive number"},
		{"log?n=99999999", 200, "404"},
		{"log?status=404", 200, "http://a.test/missing"},
		{"host?h=a.test", 200, "1 lines of this host"},
		{"launch", 400, "want ?source="},
		{"ack", 400, "want ?id="},
		{"reports/..%2Fconsole.go", 404, "no report"},
		{"reports/adir", 404, "no report"},
		{"reports/.hidden", 404, "no report"},
	} {
		code, body, _ := h.do(cl, "GET", Prefix+tt.path, nil)
		if code != tt.want || !strings.Contains(body, tt.says) {
			t.Errorf("GET %s: %d, want %d saying %q:\n%s", tt.path, code, tt.want, tt.says, body)
		}
	}
	for _, tt := range []struct {
		name string
		form url.Values
		says string
	}{
		{"no command", url.Values{}, `missing required field &#34;command&#34;`},
		{"unknown command", url.Values{"command": {"explode"}}, `unknown command &#34;explode&#34;`},
		{"host scope without host", url.Values{"command": {"pause"}, "scope": {"host"}}, `scope &#34;host&#34; needs &#34;host&#34;`},
		{"terminate unconfirmed", url.Values{"command": {"terminate"}}, "terminate needs its confirm box ticked"},
		{"exclusion unconfirmed", url.Values{"command": {"exclusions"}, "urls": {"http://a.test/x"}}, "exclusions needs its confirm box ticked"},
		{"seeds without URLs", url.Values{"command": {"seeds"}, "urls": {"\n \n"}}, `needs a non-empty &#34;urls&#34; list`},
		{"seed removal unconfirmed", url.Values{"command": {"seeds"}, "action": {"remove"}, "urls": {"http://a.test/"}}, "terminate needs its confirm box ticked"},
		{"two seeds removed at once", url.Values{"command": {"seeds"}, "action": {"remove"}, "urls": {"http://a.test/\nhttp://b.test/"}, "confirm": {"yes"}},
			"remove one seed at a time"},
		{"delete unconfirmed", url.Values{"command": {"delete"}, "regex": {"/cal/"}}, "delete needs its confirm box ticked"},
		{"delete with a bad regex", url.Values{"command": {"delete"}, "regex": {"(unclosed"}, "confirm": {"yes"}}, "regex: error parsing regexp"},
		{"sheets without names", url.Values{"command": {"sheets"}, "urls": {"http://a.test/"}}, `needs a non-empty &#34;sheets&#34; list`},
	} {
		tt.form.Set("csrf", csrf)
		code, body, _ := h.do(cl, "POST", Prefix+"control", tt.form)
		if code != http.StatusBadRequest || !strings.Contains(body, tt.says) {
			t.Errorf("%s: %d, want 400 saying %q:\n%s", tt.name, code, tt.says, body)
		}
	}
	big := url.Values{"csrf": {csrf}, "command": {"seeds"}, "urls": {strings.Repeat("http://a.test/\n", maxFormBytes/15+1)}}
	if code, _, _ := h.do(cl, "POST", Prefix+"control", big); code != http.StatusBadRequest {
		t.Errorf("oversized form: %d, want 400", code)
	}
	if sent != 0 {
		t.Fatalf("%d bad commands were sent", sent)
	}
}

// Removing a seed terminates the target it was launched as (its URL is
// its source tag), confirmed, as the operator who sent it.
func TestRemoveSeed(t *testing.T) {
	var got []messages.Control
	h := newHarness(t, harnessOptions{deps: func(d *Deps) {
		d.API.Send = func(_ context.Context, m messages.Control) (string, error) { got = append(got, m); return "id1", nil }
	}})
	cl := h.client()
	csrf := h.login(cl, operatorToken)
	form := url.Values{"csrf": {csrf}, "command": {"seeds"}, "action": {"remove"}, "urls": {" http://a.test/start \n"}, "confirm": {"yes"}}
	if code, body, _ := h.do(cl, "POST", Prefix+"control", form); code != http.StatusSeeOther {
		t.Fatalf("remove seed: %d %s", code, body)
	}
	if len(got) != 1 || got[0].Command != messages.CommandTerminate || got[0].Scope != messages.ScopeTarget ||
		got[0].Source != "http://a.test/start" || len(got[0].URLs) != 0 || got[0].By != "console:operator" {
		t.Fatalf("sent %+v, want one terminate of target http://a.test/start by the operator", got)
	}
}
