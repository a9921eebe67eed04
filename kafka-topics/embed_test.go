package kafkatopics_test

import (
	"bytes"
	"testing"

	kafkatopics "github.com/trawler-crawl/trawler/kafka-topics"
	"github.com/trawler-crawl/trawler/pkg/kafka"
)

func TestDefaultParsesAndIsACopy(t *testing.T) {
	a := kafkatopics.Default()
	specs, err := kafka.ParseTopics(a)
	if err != nil {
		t.Fatalf("embedded topics.yaml does not parse: %v", err)
	}
	if len(specs) != 20 {
		t.Errorf("%d topics, want the 14 of ARCHITECTURE.md section 3, the 3 torender topics, 2 harveststats and fc.documents", len(specs))
	}
	orig := bytes.Clone(a)
	a[0] ^= 0xff
	if b := kafkatopics.Default(); !bytes.Equal(b, orig) {
		t.Error("changing one Default() result changed the next")
	}
}

// The domain crawl's journal topics outlive the crawl (about three months
// at UKWA): a frontier rebuild replays only what they still hold.
func TestDomainCrawlJournalRetention(t *testing.T) {
	specs, err := kafka.ParseTopics(kafkatopics.Default())
	if err != nil {
		t.Fatal(err)
	}
	const days120 = "10368000000"
	seen := 0
	for _, s := range specs {
		switch s.Name {
		case "dc.tocrawl", "dc.inscope", "dc.crawled":
			seen++
			if got := s.Configs["retention.ms"]; got != days120 {
				t.Errorf("%s: retention.ms %s, want %s (120 days)", s.Name, got, days120)
			}
		}
	}
	if seen != 3 {
		t.Fatalf("found %d of the domain crawl's three journal topics", seen)
	}
}
