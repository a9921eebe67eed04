package renderer

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Hand-offs that do not decode go to the DLQ with the reason, and the
// renderer goes on to render the next one.
func TestBadHandOffGoesToDLQ(t *testing.T) {
	s := startSite(t)
	e := newEnv(t)
	_, stop := e.start(t, Config{}, testProfile())
	defer stop()
	for _, v := range []string{"not json", `{"url": 5}`} {
		if err := e.cl.ProduceSync(context.Background(), &kgo.Record{Topic: "fc.torender.npld", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	e.handOff(t, s.base+"/page2")
	e.readTopic(t, "fc.crawled", hasURL("onreadydom:"+s.base+"/page2"))
	dlq := e.readTopic(t, "fc.dlq", func(recs []*kgo.Record) bool { return len(recs) >= 2 })
	for _, r := range dlq {
		reason := ""
		for _, h := range r.Headers {
			if h.Key == "trawler-dlq-error" {
				reason = string(h.Value)
			}
		}
		if reason == "" {
			t.Errorf("DLQ record %q without a reason", r.Value)
		}
	}
}
