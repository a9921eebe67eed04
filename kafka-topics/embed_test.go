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
	if len(specs) != 14 {
		t.Errorf("%d topics, want the 14 of ARCHITECTURE.md section 3", len(specs))
	}
	orig := bytes.Clone(a)
	a[0] ^= 0xff
	if b := kafkatopics.Default(); !bytes.Equal(b, orig) {
		t.Error("changing one Default() result changed the next")
	}
}
