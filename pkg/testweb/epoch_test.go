package testweb

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestEpochChangesExactlyChanged(t *testing.T) {
	srv := startSite(t, smallSite(21))
	urls := srv.Reachable(ReachOptions{FollowSitemaps: true})
	if got := srv.Changed(3, 3); len(got) != 0 {
		t.Errorf("Changed(3, 3) = %v, want none", got)
	}
	before := snapshot(t, srv, urls)
	srv.SetEpoch(1)
	if srv.Epoch() != 1 {
		t.Fatalf("Epoch() = %d after SetEpoch(1)", srv.Epoch())
	}
	after := snapshot(t, srv, urls)
	var differ []string
	for _, u := range urls {
		k := portless(srv, u)
		if before[k] != after[k] {
			differ = append(differ, u)
		}
	}
	want := srv.Changed(0, 1)
	if d := diff(want, differ); d != "" {
		t.Fatalf("Changed(0, 1) (%d URLs) and observed changes (%d URLs) differ:\n%s", len(want), len(differ), d)
	}
	var html, changedHTML int
	for _, u := range urls {
		if strings.HasSuffix(u, ".html") || strings.HasSuffix(u, "/") {
			html++
			if contains(want, u) {
				changedHTML++
			}
		}
	}
	if ratio := float64(changedHTML) / float64(html); ratio < 0.1 || ratio > 0.3 {
		t.Errorf("%d of %d HTML URLs changed (%.2f), want about 20%%", changedHTML, html, ratio)
	}
	if !slices.Equal(srv.Changed(0, 1), srv.Changed(1, 0)) || !slices.Equal(srv.Changed(0, 1), srv.Changed(5, 9)) {
		t.Error("Changed is not symmetric or not the same subset for every pair of epochs")
	}
}

func TestConditionalRequestsFollowEpoch(t *testing.T) {
	srv := startSite(t, smallSite(22))
	client := newClient(t, srv)
	changed := srv.Changed(0, 1)
	var same string
	for _, u := range srv.Reachable(ReachOptions{}) {
		if strings.HasSuffix(u, ".html") && !contains(changed, u) && !documented404.MatchString(pathOf(t, u)) {
			same = u
			break
		}
	}
	var volatile string
	for _, u := range changed {
		if strings.HasSuffix(u, ".html") {
			volatile = u
			break
		}
	}
	if same == "" || volatile == "" {
		t.Fatalf("need one changing and one stable page; changed=%v", changed)
	}
	validators := map[string][2]string{}
	for _, u := range []string{same, volatile} {
		_, resp := getFull(t, srv, u)
		validators[u] = [2]string{resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")}
	}
	srv.SetEpoch(1)
	cases := []struct {
		name, url, header string
		value             func(v [2]string) string
		want              int
	}{
		{"stable If-None-Match", same, "If-None-Match", func(v [2]string) string { return v[0] }, http.StatusNotModified},
		{"stable If-Modified-Since", same, "If-Modified-Since", func(v [2]string) string { return v[1] }, http.StatusNotModified},
		{"changed If-None-Match", volatile, "If-None-Match", func(v [2]string) string { return v[0] }, http.StatusOK},
		{"changed If-Modified-Since", volatile, "If-Modified-Since", func(v [2]string) string { return v[1] }, http.StatusOK},
		{"weak and listed ETag", same, "If-None-Match", func(v [2]string) string { return `"nope", W/` + v[0] }, http.StatusNotModified},
		{"garbage date", same, "If-Modified-Since", func([2]string) string { return "yesterday" }, http.StatusOK},
	}
	for _, c := range cases {
		req, err := http.NewRequest(http.MethodGet, c.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(c.header, c.value(validators[c.url]))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
}

// pathOf returns the path of a URL.
func pathOf(t *testing.T, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatalf("parse %q: %v", u, err)
	}
	return pu.Path
}
