package worker

import (
	"io"
	"net/http"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/challenge"
	"github.com/trawler-crawl/trawler/pkg/fetch"
)

// challenged says whether resp is a bot-challenge or CAPTCHA page
// (pkg/challenge). Such an answer is handled as a server asking to slow
// down: nothing of it is recorded, the host backs off (its back-off
// reason is "challenge", which ctl and the console show), and the URI is
// tried again; when its retries run out it finishes -8 annotated
// challenge:<vendor>.
func (w *Worker) challenged(t *task, resp *fetch.Response) bool {
	p := t.eff.Profile.Fetch
	if !p.DetectChallenges || resp.StatusCode < 200 {
		return false
	}
	var head []byte
	if mayBeInterstitial(resp) {
		// An undecodable body is checked by its headers alone.
		if body, err := decodedBody(resp); err == nil {
			head, _ = io.ReadAll(io.LimitReader(body, challenge.BodyPrefix))
			_ = body.Close()
		}
	}
	m, ok := challenge.Detect(resp.StatusCode, resp.Header, head, p.ChallengeMarkers)
	if !ok {
		return false
	}
	t.out.notes = append(t.out.notes, annotationChallenge+m.Vendor)
	w.metrics.challenges.WithLabelValues(m.Vendor).Inc()
	w.log.Info("bot-challenge page: not recorded; the host backs off", "url", t.l.URL, "status", resp.StatusCode,
		"vendor", m.Vendor, "signature", m.Signature)
	return true
}

// smallPage bounds the 200 answers read for challenge markers: a
// challenge served as a 200 (Imperva's, Sucuri's) is a small script page,
// and reading every ordinary page's start would cost every fetch.
const smallPage = 16 << 10

// mayBeInterstitial says whether resp's body is worth reading for
// markers: any answer with a status challenges come with, and small 200
// HTML pages. Headers are checked whatever the body.
func mayBeInterstitial(resp *fetch.Response) bool {
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode >= 400 || resp.StatusCode == http.StatusAccepted
	}
	return resp.Payload.Size() <= smallPage && strings.Contains(resp.MIME, "html")
}

// annotationChallenge prefixes the vendor of a challenge page in the
// annotations of a URI that met one.
const annotationChallenge = "challenge:"
