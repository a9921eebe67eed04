package worker

// End-to-end tests of the fetch chain's cookies and credentials,
// conditional requests and virus scan; helpers are in fetchchain_test.go.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/trawler-crawl/trawler/pkg/clamav/clamdtest"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// A session cookie set by "/" is sent with "/next", which refuses
// requests without it; under ignoreCookies nothing is kept or sent.
func TestCookies(t *testing.T) {
	for _, tc := range []struct {
		ignore bool
		want   int
	}{{false, 200}, {true, 403}} {
		t.Run(map[bool]string{false: "jar", true: "ignoreCookies"}[tc.ignore], func(t *testing.T) {
			e := setup(t)
			site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/":
					http.SetCookie(w, &http.Cookie{Name: "sess", Value: "v1", Path: "/"})
					fcHTML(w, fcPage("", "/next"))
				case "/next":
					if c, err := r.Cookie("sess"); err != nil || c.Value != "v1" {
						http.Error(w, "no session", http.StatusForbidden)
						return
					}
					fcHTML(w, fcPage(""))
				default:
					http.NotFound(w, r)
				}
			})
			p := fcProfile()
			p.Fetch.IgnoreCookies = tc.ignore
			events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("site.test"), seeds: []string{site.url("site.test", "/")}, minURIs: 2})
			if ev := fcOne(t, events, site.url("site.test", "/next")); ev.StatusCode != tc.want {
				t.Fatalf("/next: status %d, want %d", ev.StatusCode, tc.want)
			}
		})
	}
}

const (
	fcBasicPassword = "b4sic-Pa55word"
	fcFormPassword  = "f0rm-Pa55word"
)

// credSite serves a page behind HTTP basic authentication (/secret) and
// pages behind a form login (/login sets the session cookie "auth").
func credSite(t *testing.T) *fcSite {
	return fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			fcHTML(w, fcPage("", "/secret", "/members.html"))
		case "/secret":
			if u, pw, ok := r.BasicAuth(); !ok || u != "alice" || pw != fcBasicPassword {
				w.Header().Set("WWW-Authenticate", `Basic realm="members"`)
				http.Error(w, "login", http.StatusUnauthorized)
				return
			}
			fcHTML(w, fcPage(""))
		case "/login":
			if r.Method != http.MethodPost || r.PostFormValue("user") != "alice" || r.PostFormValue("pass") != fcFormPassword {
				http.Error(w, "bad login", http.StatusForbidden)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "auth", Value: "ok", Path: "/"})
			fcHTML(w, "welcome")
		case "/members.html":
			if c, err := r.Cookie("auth"); err != nil || c.Value != "ok" {
				http.Error(w, "members only", http.StatusForbidden)
				return
			}
			fcHTML(w, fcPage(""))
		default:
			http.NotFound(w, r)
		}
	})
}

// HTTP basic credentials unlock a 401 page; a form login runs once,
// before the host's first URI, as a prerequisite of its own; no password
// reaches a crawled event or crawl.log.
func TestCredentials(t *testing.T) {
	for _, tc := range []struct {
		name              string
		basic, form       bool
		wantSecret, wantM int
	}{
		{"none", false, false, 401, 403},
		{"basic", true, false, 200, 403},
		{"form", false, true, 401, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			site := credSite(t)
			authority := "site.test:" + site.port
			p := fcProfile()
			if tc.basic {
				p.Credentials.HTTP = []profile.HTTPCredential{{Domain: authority, Realm: "members", Login: "alice", Password: fcBasicPassword}}
			}
			login := site.url("site.test", "/login")
			if tc.form {
				p.Credentials.Forms = []profile.FormCredential{{Domain: authority, LoginURI: login,
					FormItems: map[string]profile.Secret{"user": "alice", "pass": fcFormPassword}}}
			}
			dir := t.TempDir()
			events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("site.test"), seeds: []string{site.url("site.test", "/")}, minURIs: 3, dir: dir})

			if ev := fcOne(t, events, site.url("site.test", "/secret")); ev.StatusCode != tc.wantSecret {
				t.Errorf("/secret: status %d, want %d", ev.StatusCode, tc.wantSecret)
			}
			if ev := fcOne(t, events, site.url("site.test", "/members.html")); ev.StatusCode != tc.wantM {
				t.Errorf("/members.html: status %d, want %d", ev.StatusCode, tc.wantM)
			}
			site.mu.Lock()
			order := append([]string(nil), site.order...)
			site.mu.Unlock()
			if !tc.form {
				if len(events[login]) != 0 || site.hitCount("/login") != 0 {
					t.Errorf("login submitted without form credentials: %v", order)
				}
			} else {
				if ev := fcOne(t, events, login); ev.StatusCode != 200 || ev.HopPath != "P" || ev.WarcFilename == nil {
					t.Errorf("login: status %d hop %q warc %v, want one 200 prerequisite (hop P) with a capture", ev.StatusCode, ev.HopPath, ev.WarcFilename)
				}
				if fcIndex(order, "POST /login") < 0 || fcIndex(order, "POST /login") > fcIndex(order, "GET /") || site.hitCount("/login") != 1 {
					t.Errorf("requests %v: want one POST /login before GET /", order)
				}
			}
			fcNoSecret(t, e, dir, fcBasicPassword, fcFormPassword)
		})
	}
}

func fcIndex(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// fcNoSecret fails if a secret appears in a crawled event or crawl.log.
func fcNoSecret(t *testing.T, e *env, dir string, secrets ...string) {
	t.Helper()
	var blobs [][]byte
	for _, r := range readTopic(t, e, "fc.crawled") {
		blobs = append(blobs, r.Value)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "fc-npld", "*"))
	if len(logs) == 0 {
		t.Fatal("no crawl.log written")
	}
	for _, name := range logs {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, b)
	}
	for _, b := range blobs {
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Fatalf("a password appears in %s", b)
			}
		}
	}
}

// A URL the recently-crawled DB knows with validators is fetched with
// If-None-Match and If-Modified-Since; the server's 304 gives a 304 event
// and a server-not-modified revisit record. Without the profile switches
// neither header is sent and the full response is recorded.
func TestConditionalRequests(t *testing.T) {
	const etag, lastMod = `"v1"`, "Mon, 01 Jan 2024 00:00:00 GMT"
	for _, tc := range []struct {
		name           string
		noneMatch, ims bool
		want           int
	}{
		{"both", true, true, 304},
		{"etag only", true, false, 304},
		{"neither", false, false, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			var mu sync.Mutex
			var gotINM, gotIMS []string
			site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/page" {
					http.NotFound(w, r)
					return
				}
				mu.Lock()
				gotINM, gotIMS = append(gotINM, r.Header.Get("If-None-Match")), append(gotIMS, r.Header.Get("If-Modified-Since"))
				mu.Unlock()
				w.Header().Set("ETag", etag)
				if r.Header.Get("If-None-Match") == etag {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				fcHTML(w, fcPage("<title>new</title>"))
			})
			page := site.url("site.test", "/page")
			// Captured long enough ago to be due again under the default
			// recrawl interval (one year).
			then := time.Now().Add(-400 * 24 * time.Hour).UTC().Truncate(time.Millisecond)
			db, err := recentdb.New(e.rdb, recentdb.Options{Crawl: "fc", Stream: "npld"})
			if err != nil {
				t.Fatal(err)
			}
			const digest = "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
			if err := db.Put(context.Background(), []recentdb.Update{{URL: page,
				Capture:  &recentdb.Capture{Time: then, Status: 200, Digest: digest, ETag: etag, LastModified: lastMod, Filename: "OLD.warc.gz", Offset: 100, Length: 500},
				Original: &recentdb.Original{Time: then, Digest: digest, Filename: "OLD.warc.gz", Offset: 100, Length: 500},
			}}); err != nil {
				t.Fatal(err)
			}
			p := fcProfile()
			p.Fetch.SendIfNoneMatch, p.Fetch.SendIfModifiedSince = tc.noneMatch, tc.ims
			dir := t.TempDir()
			events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("site.test"), seeds: []string{page}, minURIs: 1, dir: dir})

			mu.Lock()
			defer mu.Unlock()
			wantINM, wantIMS := map[bool]string{true: etag}[tc.noneMatch], map[bool]string{true: lastMod}[tc.ims]
			if len(gotINM) != 1 || gotINM[0] != wantINM || gotIMS[0] != wantIMS {
				t.Fatalf("requests carried If-None-Match %q and If-Modified-Since %q, want one with %q and %q", gotINM, gotIMS, wantINM, wantIMS)
			}
			ev := fcOne(t, events, page)
			if ev.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", ev.StatusCode, tc.want)
			}
			h, typ, _ := fcRecord(t, dir, ev)
			switch {
			case tc.want == 304 && (typ != gowarc.Revisit || !strings.HasSuffix(h.Get(gowarc.WarcProfile), "/revisit/server-not-modified")):
				t.Fatalf("304 recorded as %s with profile %q, want a server-not-modified revisit", typ, h.Get(gowarc.WarcProfile))
			case tc.want == 304 && h.Get(gowarc.WarcRefersToTargetURI) != page:
				t.Fatalf("revisit refers to %q, want %q", h.Get(gowarc.WarcRefersToTargetURI), page)
			case tc.want == 200 && typ != gowarc.Response:
				t.Fatalf("200 recorded as %s, want a response", typ)
			}
		})
	}
}

// clamSite serves a clean home page linking to a clean page, the EICAR
// test file, a clean stylesheet and one carrying the custom signature's
// marker. Each stylesheet refers to an image; the infected one also names a
// page in a Link header. A stylesheet rather than an HTML page carries the
// marker because clamd scans HTML only after normalising it to lower case,
// which the test database's upper-case signatures never match.
func clamSite(t *testing.T) *fcSite {
	return fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fcHTML(w, fcPage("", "/clean.html", "/eicar.txt", "/marker.css", "/clean.css"))
		case "/clean.html":
			fcHTML(w, fcPage("<title>clean</title>"))
		case "/eicar.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, clamdtest.EICAR)
		case "/marker.css":
			w.Header().Set("Content-Type", "text/css")
			w.Header().Set("Link", `</from-infected.html>; rel="next"`)
			_, _ = io.WriteString(w, "/* "+clamdtest.TestNDBMarker+" */\nbody { background: url(/from-infected.png) }\n")
		case "/clean.css":
			w.Header().Set("Content-Type", "text/css")
			_, _ = io.WriteString(w, "body { background: url(/from-clean.png) }\n")
		case "/from-clean.png", "/from-infected.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = io.WriteString(w, "png")
		default:
			http.NotFound(w, r)
		}
	})
}

// A real clamd finds the EICAR file and the marked stylesheet: both go to
// the viral WARCs with clamd's reply on their events, and the infected
// stylesheet's links are not followed while the clean one's are; clean
// captures go to the normal WARCs.
func TestClamAVScan(t *testing.T) {
	e := setup(t)
	c := clamdtest.Start(t, 1<<20)
	site := clamSite(t)
	dir := t.TempDir()
	events := e.crawl(t, crawlRun{p: fcProfile(), resolver: newFCHosts("site.test"), seeds: []string{site.url("site.test", "/")},
		minURIs: 6, dir: dir, clamd: c.Addr})

	for path, sig := range map[string]string{"/eicar.txt": clamdtest.EICARSignature, "/marker.css": clamdtest.NDBSignature,
		"/": "", "/clean.html": "", "/clean.css": "", "/from-clean.png": ""} {
		ev := fcOne(t, events, site.url("site.test", path))
		if ev.StatusCode != 200 {
			t.Errorf("%s: status %d, want 200", path, ev.StatusCode)
			continue
		}
		_, typ, viral := fcRecord(t, dir, ev)
		infected := sig != ""
		if typ != gowarc.Response || viral != infected || strings.Contains(*ev.WarcFilename, "-VIRAL-") != infected {
			t.Errorf("%s: %s record in %s (viral dir %v), want viral=%v", path, typ, *ev.WarcFilename, viral, infected)
		}
		if infected && !fcHasNote(ev, "stream: "+sig+" FOUND") {
			t.Errorf("%s: annotations %q lack clamd's reply for %s", path, ev.Annotations, sig)
		}
		if !infected && strings.Contains(ev.Annotations, "FOUND") {
			t.Errorf("%s: clean page annotated %q", path, ev.Annotations)
		}
	}
	for _, path := range []string{"/from-infected.png", "/from-infected.html"} {
		if evs := events[site.url("site.test", path)]; len(evs) != 0 || site.hitCount(path) != 0 {
			t.Errorf("%s, a link of an infected capture, was followed: %+v", path, evs)
		}
	}
}

// With clamd down, writeUnscanned records pages marked clamav:unscanned;
// hold retries the URI, then finishes it -8 with clamav:unavailable and
// writes nothing.
func TestClamAVUnavailable(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   int
	}{{profile.ClamAVWriteUnscanned, 200}, {profile.ClamAVHold, -8}} {
		t.Run(tc.policy, func(t *testing.T) {
			e := setup(t)
			c := clamdtest.Start(t, 1<<20)
			c.Stop()
			site := clamSite(t)
			p := fcProfile()
			p.ClamAV.OnUnavailable, p.ClamAV.Retries = tc.policy, 0
			dir := t.TempDir()
			seed := site.url("site.test", "/")
			events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("site.test"), seeds: []string{seed}, minURIs: 1, dir: dir, clamd: c.Addr})

			ev := fcOne(t, events, seed)
			if ev.StatusCode != tc.want {
				t.Fatalf("seed: status %d (%q), want %d", ev.StatusCode, ev.Annotations, tc.want)
			}
			if tc.policy == profile.ClamAVHold {
				if !fcHasNote(ev, "clamav:unavailable") || !fcHasNote(ev, "3t") || ev.WarcFilename != nil || site.hitCount("/") != 3 {
					t.Fatalf("held seed: notes %q warc %v after %d fetches, want clamav:unavailable,3t and no capture after 3",
						ev.Annotations, ev.WarcFilename, site.hitCount("/"))
				}
				if n := fcResponses(t, dir)[seed]; n != 0 {
					t.Fatalf("held seed written %d times", n)
				}
				return
			}
			for _, path := range []string{"/", "/clean.html", "/eicar.txt", "/marker.css", "/from-infected.png"} {
				ev := fcOne(t, events, site.url("site.test", path))
				if ev.StatusCode != 200 || !fcHasNote(ev, "clamav:unscanned") {
					t.Errorf("%s: status %d notes %q, want 200 clamav:unscanned", path, ev.StatusCode, ev.Annotations)
					continue
				}
				if _, _, viral := fcRecord(t, dir, ev); viral {
					t.Errorf("%s: unscanned capture in the viral WARCs", path)
				}
			}
		})
	}
}

// fcResponses counts the response and revisit records of each URL in every
// WARC under dir.
func fcResponses(t *testing.T, dir string) map[string]int {
	t.Helper()
	var files []string
	for _, sub := range []string{"warcs", "warcs-viral"} {
		m, _ := filepath.Glob(filepath.Join(dir, sub, "fc-npld", "*.warc.gz"))
		files = append(files, m...)
	}
	out := map[string]int{}
	for _, name := range files {
		r, err := warcwriter.OpenReader(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, _, _, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if rec.Type() == gowarc.Response || rec.Type() == gowarc.Revisit {
				out[rec.WarcHeader().Get(gowarc.WarcTargetURI)]++
			}
			_ = rec.Close()
		}
		_ = r.Close()
	}
	return out
}
