package worker

import (
	"net/http"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// With render.handOff a seed and a URI annotated WebRenderThis go to the
// torender topic and finish -5002, unfetched; a plain link is fetched; and
// a launch the renderer gave back (renderFailed, forced) is fetched plainly
// with the annotation on its event, not handed off again.
func TestRenderHandOff(t *testing.T) {
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		default:
			fcHTML(w, fcPage(""))
		}
	})
	e := setup(t)
	p := fcProfile()
	p.Render.HandOff = true
	seed, marked, failed := site.url("render.test", "/"), site.url("render.test", "/marked"), site.url("render.test", "/failed")
	events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("render.test"), seeds: []string{seed, marked, failed}, minURIs: 3,
		launch: func(l *messages.Launch) {
			switch l.URL {
			case marked:
				l.IsSeed = false
				l.ParentURLMetadata.HeritableData.Annotations = []string{messages.AnnotationWebRenderThis}
			case failed:
				l.ForceFetch = true
				l.ParentURLMetadata.HeritableData.Annotations = []string{messages.AnnotationWebRenderThis, messages.AnnotationRenderFailed}
			}
		}})
	for _, u := range []string{seed, marked} {
		ev := fcOne(t, events, u)
		if ev.StatusCode != statusHandedOff || ev.WarcFilename != nil {
			t.Errorf("%s: status %d, warc %v; want -5002 and nothing written", u, ev.StatusCode, ev.WarcFilename)
		}
	}
	if ev := fcOne(t, events, failed); ev.StatusCode != 200 || !fcHasNote(ev, messages.AnnotationRenderFailed) {
		t.Errorf("%s: status %d annotations %q; want 200 with renderFailed", failed, ev.StatusCode, ev.Annotations)
	}
	if a, b, c := site.hitCount("/"), site.hitCount("/marked"), site.hitCount("/failed"); a != 0 || b != 0 || c != 1 {
		t.Errorf("fetches of /, /marked, /failed: %d, %d, %d; want 0, 0, 1", a, b, c)
	}
	var handed []string
	for _, r := range readTopic(t, e, "fc.torender.npld") {
		l, err := messages.DecodeLaunch(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		handed = append(handed, l.URL)
	}
	if len(handed) != 2 {
		t.Errorf("torender holds %v, want %s and %s", handed, seed, marked)
	}
}
