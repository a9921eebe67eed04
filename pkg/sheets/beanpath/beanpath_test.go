package beanpath

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

func TestLookup(t *testing.T) {
	tests := []struct {
		path, target string
		ok           bool
	}{
		{"queueAssignmentPolicy.parallelQueues", "frontier.parallelQueues", true},
		{"disposition.minDelayMs", "politeness.minDelayMs", true},
		{"disposition.maxPerHostBandwidthUsageKbSec", "frontier.maxPerHostBandwidthUsageKbSec", true},
		{"quotaEnforcer.serverMaxSuccessKb", "quotas.serverMaxSuccessKb", true},
		{"crawlLimiter.maxBytesDownload", "limits.maxBytesDownload", true},
		{"metadata.robotsPolicyName", "robots.policy", true},
		{"recentlySeen.recrawlInterval", "frontier.recrawlInterval", true},
		{"fetchHttp.ignoreCookies", "fetch.ignoreCookies", true},
		{"extractorJs.enabled", "extract.javascript", true},
		{"queueAssignmentPolicy.deferToPrevious", "", true},
		{"onDomainAccept.enabled", "", true},
		{"surtPrefixSeedScope.alsoCheckVia", "", true},
		{"metadata.jobName", "", false},
		{"fetchHttp.", "", false},
		{"politeness", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		a, ok := Lookup(tc.path)
		if ok != tc.ok || a.Target != tc.target {
			t.Errorf("Lookup(%q) = %+v, %v; want %q, %v", tc.path, a, ok, tc.target, tc.ok)
		}
		if ok && a.Target == "" && a.Note == "" {
			t.Errorf("%s: no target and no note", tc.path)
		}
	}
}

func TestConverters(t *testing.T) {
	hops, _ := Lookup("hopsCountReject.enabled")
	if n, _, err := hops.Convert(scalar("false")); err != nil || n.Value != "-1" {
		t.Fatalf("enabled=false: %v %v", n, err)
	}
	if n, note, err := hops.Convert(scalar("true")); err != nil || n != nil || note == "" {
		t.Fatalf("enabled=true: %v %q %v", n, note, err)
	}
	if _, _, err := hops.Convert(scalar("perhaps")); err == nil {
		t.Fatal("want error for a non-boolean")
	}
	so, _ := Lookup("fetchHttp.soTimeoutMs")
	for in, want := range map[string]string{"20000": "20", "1": "1", "0": "0", "1500": "2"} {
		if n, _, err := so.Convert(scalar(in)); err != nil || n.Value != want {
			t.Errorf("soTimeoutMs %s: %v %v, want %s", in, n, err, want)
		}
	}
	for _, bad := range []string{"-1", "soon"} {
		if _, _, err := so.Convert(scalar(bad)); err == nil {
			t.Errorf("soTimeoutMs %s: want error", bad)
		}
	}
}
