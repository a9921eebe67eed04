package kafka

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	kafkatopics "github.com/trawler-crawl/trawler/kafka-topics"
	"github.com/twmb/franz-go/pkg/kadm"
)

func defaultSpecs(t *testing.T) []TopicSpec {
	t.Helper()
	specs, err := ParseTopics(kafkatopics.Default())
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

func specNames(specs []TopicSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

// topicState returns a topic's partition count and its configs of interest.
func topicState(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) (int, map[string]string) {
	t.Helper()
	td, err := adm.ListTopics(kadm.WithAuthorizedOps(ctx), topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("list %s: %v %v", topic, err, td[topic].Err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := rcs.On(topic, nil)
	cfg := map[string]string{}
	for _, c := range rc.Configs {
		switch c.Key {
		case "retention.ms", "compression.type", "cleanup.policy", "max.message.bytes":
			cfg[c.Key] = c.MaybeValue()
		}
	}
	return len(td[topic].Partitions), cfg
}

func TestApplyTopicsIdempotent(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	cfg := newCluster(t, 0)
	adm := kadm.NewClient(newTestClient(t, cfg))
	specs := defaultSpecs(t)

	rep, err := ApplyTopics(ctx, adm, specs, 0)
	if err != nil {
		t.Fatalf("first apply: %v", err)
	}
	if !slices.Equal(rep.Created, specNames(specs)) || len(rep.Updated) != 0 || len(rep.Unchanged) != 0 || !rep.Changed() {
		t.Fatalf("first apply report:\n%s", rep)
	}
	for _, s := range specs {
		n, c := topicState(t, ctx, adm, s.Name)
		if n != 16 || c["retention.ms"] != s.Configs["retention.ms"] || c["compression.type"] != "snappy" || c["cleanup.policy"] != "delete" {
			t.Errorf("%s: %d partitions, configs %v", s.Name, n, c)
		}
	}

	rep, err = ApplyTopics(ctx, adm, specs, 0)
	if err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if rep.Changed() || !slices.Equal(rep.Unchanged, specNames(specs)) || len(rep.Notes) != 0 {
		t.Fatalf("second apply changed something:\n%s", rep)
	}
}

func TestApplyTopicsUpdatesExisting(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	cfg := newCluster(t, 0)
	adm := kadm.NewClient(newTestClient(t, cfg))

	// fc.crawled: too few partitions, wrong retention, an operator's own
	// max.message.bytes. dc.dlq: more partitions than wanted.
	crawledCfg := map[string]*string{
		"retention.ms": kadm.StringPtr("1000"), "max.message.bytes": kadm.StringPtr("2000000"),
		"compression.type": kadm.StringPtr("snappy"), "cleanup.policy": kadm.StringPtr("delete"),
	}
	if _, err := adm.CreateTopic(ctx, 4, -1, crawledCfg, "fc.crawled"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 32, -1, nil, "dc.dlq"); err != nil {
		t.Fatal(err)
	}
	var specs []TopicSpec
	for _, s := range defaultSpecs(t) {
		if s.Name == "fc.crawled" || s.Name == "dc.dlq" || s.Name == "fc.warcs" {
			specs = append(specs, s)
		}
	}

	rep, err := ApplyTopics(ctx, adm, specs, 0)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if !slices.Equal(rep.Created, []string{"fc.warcs"}) {
		t.Errorf("created %v, want [fc.warcs]", rep.Created)
	}
	var crawled, dlq []string
	for _, u := range rep.Updated {
		switch u.Name {
		case "fc.crawled":
			crawled = u.Changes
		case "dc.dlq":
			dlq = u.Changes
		}
	}
	wantCrawled := []string{"partitions 4 -> 16", `retention.ms "1000" -> "2592000000"`}
	if !slices.Equal(crawled, wantCrawled) {
		t.Errorf("fc.crawled changes %q, want %q", crawled, wantCrawled)
	}
	if slices.Contains(dlq, "partitions 32 -> 16") || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "dc.dlq has 32 partitions") {
		t.Errorf("dc.dlq changes %q, notes %q: partitions must not be lowered, and that must be noted", dlq, rep.Notes)
	}
	n, c := topicState(t, ctx, adm, "fc.crawled")
	if n != 16 || c["retention.ms"] != thirtyDays || c["max.message.bytes"] != "2000000" {
		t.Errorf("fc.crawled after apply: %d partitions, %v (max.message.bytes must be left alone)", n, c)
	}
	if n, _ := topicState(t, ctx, adm, "dc.dlq"); n != 32 {
		t.Errorf("dc.dlq has %d partitions after apply, want 32 (never lowered)", n)
	}
	if s := rep.String(); !strings.Contains(s, "created   fc.warcs") || !strings.Contains(s, "updated   fc.crawled: partitions 4 -> 16") {
		t.Errorf("report text:\n%s", s)
	}

	rep, err = ApplyTopics(ctx, adm, specs, 0)
	if err != nil || rep.Changed() || len(rep.Unchanged) != 3 {
		t.Fatalf("second apply: %v\n%s", err, rep)
	}
}

func TestApplyTopicsPartitionsOverride(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	cfg := newCluster(t, 0)
	adm := kadm.NewClient(newTestClient(t, cfg))
	specs := defaultSpecs(t)[:2]
	if _, err := ApplyTopics(ctx, adm, specs, 2); err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if n, _ := topicState(t, ctx, adm, s.Name); n != 2 {
			t.Errorf("%s has %d partitions, want override 2", s.Name, n)
		}
	}
}

func TestApplyTopicsCarriesOnPastFailure(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	cfg := newCluster(t, 0)
	adm := kadm.NewClient(newTestClient(t, cfg))
	specs := []TopicSpec{
		{Name: "bad", Partitions: 1, ReplicationFactor: 3}, // one broker: cannot be placed
		{Name: "good", Partitions: 1, ReplicationFactor: -1},
	}
	rep, err := ApplyTopics(ctx, adm, specs, 0)
	if err == nil || !strings.Contains(err.Error(), "create topic bad (1 partitions, replication 3)") {
		t.Fatalf("apply = %v, want an error naming topic bad", err)
	}
	if !slices.Equal(rep.Created, []string{"good"}) {
		t.Errorf("created %v, want [good]", rep.Created)
	}
}
