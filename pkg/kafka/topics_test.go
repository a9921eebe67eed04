package kafka

import (
	"slices"
	"strings"
	"testing"

	kafkatopics "github.com/trawler-crawl/trawler/kafka-topics"
)

const (
	sevenDays  = "604800000"
	thirtyDays = "2592000000"
	// domainCrawlDays covers a domain crawl (about three months) and a
	// month's margin, so a rebuild can reach back to the crawl's start.
	domainCrawlDays = "10368000000"
)

func TestParseDefaultTopics(t *testing.T) {
	specs, err := ParseTopics(kafkatopics.Default())
	if err != nil {
		t.Fatalf("ParseTopics(default): %v", err)
	}
	want := []string{
		"fc.tocrawl.npld", "fc.tocrawl.bypm", "dc.tocrawl",
		"fc.inscope.npld", "fc.inscope.bypm", "dc.inscope",
		"fc.crawled", "dc.crawled", "fc.warcs", "dc.warcs",
		"fc.control", "dc.control", "fc.dlq", "dc.dlq",
		"fc.torender.npld", "fc.torender.bypm", "dc.torender",
		"fc.harveststats", "dc.harveststats", "fc.documents",
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		retention := sevenDays
		switch s.Name {
		case "fc.crawled":
			retention = thirtyDays
		case "dc.tocrawl", "dc.inscope", "dc.crawled":
			retention = domainCrawlDays
		}
		wantCfg := map[string]string{"cleanup.policy": "delete", "compression.type": "snappy", "retention.ms": retention}
		if strings.HasSuffix(s.Name, ".harveststats") {
			// A launch's statistics record can pass 1 MiB on a domain crawl.
			wantCfg["max.message.bytes"] = "16777216"
		}
		if s.Partitions != 16 || s.ReplicationFactor != -1 || !mapsEqual(s.Configs, wantCfg) {
			t.Errorf("%s: %d partitions, replication %d, configs %v; want 16, -1, %v",
				s.Name, s.Partitions, s.ReplicationFactor, s.Configs, wantCfg)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("topics %v, want %v", names, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestParseTopicsOverrides(t *testing.T) {
	specs, err := ParseTopics([]byte(`
defaults:
  partitions: 8
  configs:
    retention.ms: 1000
    cleanup.policy: delete
topics:
  - name: a
  - name: b
    partitions: 2
    replicationFactor: 3
    configs:
      retention.ms: "2000"
      cleanup.policy: compact,delete
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []TopicSpec{
		{Name: "a", Partitions: 8, ReplicationFactor: -1, Configs: map[string]string{"retention.ms": "1000", "cleanup.policy": "delete"}},
		{Name: "b", Partitions: 2, ReplicationFactor: 3, Configs: map[string]string{"retention.ms": "2000", "cleanup.policy": "compact,delete"}},
	}
	for i, w := range want {
		g := specs[i]
		if g.Name != w.Name || g.Partitions != w.Partitions || g.ReplicationFactor != w.ReplicationFactor || !mapsEqual(g.Configs, w.Configs) {
			t.Errorf("spec %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestParseTopicsErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"empty", "", []string{"empty file"}},
		{"only comments", "# nothing\n", []string{"empty file"}},
		{"not a mapping", "- a\n- b\n", []string{"line 1", "cannot unmarshal !!seq"}},
		{"malformed", "topics:\n  - name: a\n\tpartitions: 1\n", []string{"yaml: line 2", "tab character"}},
		{"unknown top-level key", "topcs: []\n", []string{"line 1: field topcs not found"}},
		{"unknown topic key", "topics:\n  - name: a\n    partitons: 3\n", []string{"line 3: field partitons not found"}},
		{"wrong type", "topics:\n  - name: a\n    partitions: many\n", []string{"line 3", "cannot unmarshal !!str `many`"}},
		{"partitions overflow", "topics:\n  - name: a\n    partitions: 99999999999\n", []string{"line 3", "cannot unmarshal"}},
		{"config value is a list", "topics:\n  - name: a\n    partitions: 1\n    configs:\n      retention.ms: [1]\n", []string{"line 5", "cannot unmarshal !!seq"}},
		{"two documents", "topics:\n  - name: a\n    partitions: 1\n---\ntopics: []\n", []string{"line 4: only one YAML document"}},
		{"no topics", "defaults:\n  partitions: 1\ntopics: []\n", []string{"line 3: no topics defined"}},
		{"missing name", "defaults:\n  partitions: 1\ntopics:\n  - partitions: 2\n", []string{"line 4: topic has no name"}},
		{"bad name", "defaults:\n  partitions: 1\ntopics:\n  - name: fc crawled\n", []string{`line 4: topic "fc crawled": name must be`}},
		{"dot name", "defaults:\n  partitions: 1\ntopics:\n  - name: ..\n", []string{`topic "..": name must be`}},
		{"duplicate", "defaults:\n  partitions: 1\ntopics:\n  - name: a\n  - name: a\n", []string{`line 5: topic "a": defined twice (first at line 4)`}},
		{"collision", "defaults:\n  partitions: 1\ntopics:\n  - name: fc.dlq\n  - name: fc_dlq\n", []string{`line 5: topic "fc_dlq" collides with "fc.dlq"`}},
		{"name in defaults", "defaults:\n  name: x\n  partitions: 1\ntopics:\n  - name: a\n", []string{"line 2: defaults: name is not allowed"}},
		{"zero partitions", "topics:\n  - name: a\n    partitions: 0\n", []string{`line 3: topic "a": partitions must be at least 1, got 0`}},
		{"negative default partitions", "defaults:\n  partitions: -4\ntopics:\n  - name: a\n", []string{"line 2: defaults: partitions must be at least 1, got -4"}},
		{"no partitions anywhere", "topics:\n  - name: a\n", []string{`line 2: topic "a": partitions not set`}},
		{"bad replication", "topics:\n  - name: a\n    partitions: 1\n    replicationFactor: 0\n", []string{`line 4: topic "a": replicationFactor must be -1`}},
		{"unknown config", "topics:\n  - name: a\n    partitions: 1\n    configs:\n      retention.msx: 1\n", []string{`line 5: topic "a": configs: retention.msx: unknown topic config`}},
		{"bad retention", "defaults:\n  partitions: 1\n  configs:\n    retention.ms: 7d\ntopics:\n  - name: a\n", []string{`line 4: defaults: configs: retention.ms: "7d" is not an integer`}},
		{"bad compression", "topics:\n  - name: a\n    partitions: 1\n    configs:\n      compression.type: brotli\n", []string{"line 5", "one of uncompressed"}},
		{"bad cleanup policy", "topics:\n  - name: a\n    partitions: 1\n    configs:\n      cleanup.policy: forever\n", []string{"line 5", "delete, compact"}},
		{"bad ratio", "topics:\n  - name: a\n    partitions: 1\n    configs:\n      min.cleanable.dirty.ratio: 2\n", []string{"line 5", "from 0 to 1"}},
		{"bad bool", "topics:\n  - name: a\n    partitions: 1\n    configs:\n      preallocate: yes\n", []string{"line 5", "true or false"}},
		{"bad timestamp type", "topics:\n  - name: a\n    partitions: 1\n    configs:\n      message.timestamp.type: Now\n", []string{"line 5", "CreateTime or LogAppendTime"}},
		{"every error reported", "topics:\n  - name: a\n    partitions: 0\n  - name: b\n    partitions: 1\n    configs:\n      retention.ms: x\n",
			[]string{"line 3:", "line 7:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			specs, err := ParseTopics([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("ParseTopics succeeded with %+v; want error containing %q", specs, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestNormalizeCleanupPolicy(t *testing.T) {
	for in, want := range map[string]string{
		"delete": "delete", "compact, delete": "compact,delete", "delete,compact": "compact,delete",
		"delete,delete": "delete", "": "", "forever": "", "delete,": "",
	} {
		if got := normalizeCleanupPolicy(in); got != want {
			t.Errorf("normalizeCleanupPolicy(%q) = %q, want %q", in, got, want)
		}
	}
}
