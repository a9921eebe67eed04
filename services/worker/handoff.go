package worker

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// statusHandedOff is Heritrix's code for a URI given to the renderer: the
// worker does not fetch it, the renderer captures it (and its embeds) and
// publishes those captures itself.
const statusHandedOff = -5002

// wantsRender says whether t goes to the renderer instead of being fetched:
// its sheets say render.handOff and it is a seed or annotated WebRenderThis,
// as UKWA renders them. Prerequisites (robots.txt, dns:, logins) are never
// rendered, nor is a URI the renderer gave back after a failed render.
func (w *Worker) wantsRender(t *task) bool {
	if !t.eff.Profile.Render.HandOff || w.cfg.NoHandOff || t.prereq || t.method != "" {
		return false
	}
	if !strings.HasPrefix(t.l.URL, "http://") && !strings.HasPrefix(t.l.URL, "https://") {
		return false
	}
	notes := t.l.Annotations()
	if slices.Contains(notes, messages.AnnotationRenderFailed) {
		return false
	}
	return t.l.IsSeed || slices.Contains(notes, messages.AnnotationWebRenderThis)
}

// handOff publishes t's launch message on the stream's torender topic and
// ends t with -5002. The renderer consumes that topic at least once, so a
// render lost to a crash is redone; one that fails comes back on tocrawl
// annotated renderFailed and is fetched plainly. A URI whose message could
// not be published stays in the frontier (deferred, writeguard.go) and is
// tried again.
func (w *Worker) handOff(ctx context.Context, t *task) step {
	b, err := messages.AppendLaunch(nil, t.l)
	if err != nil {
		w.log.Error("encode launch for the renderer; fetched plainly", "url", t.l.URL, "err", err)
		return proceed
	}
	rec := &kgo.Record{Topic: w.cfg.ToRenderTopic(), Key: []byte(eventKey(t.l.URL)), Value: b}
	if err := w.producer.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return w.writeFailed(ctx, writePublish, t.l.URL, fmt.Errorf("hand-off to the renderer: %w", err))
	}
	w.metrics.handedOff.Inc()
	t.finish(&outcome{status: statusHandedOff}, true)
	return finished
}
