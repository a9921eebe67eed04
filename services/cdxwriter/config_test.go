package cdxwriter

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/kafka"
)

func TestConfigFlagsAndDefaults(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if c.CDXWritesOpen {
		t.Error("CDX API writes open by default")
	}
	if err := fs.Parse([]string{"--crawl", "dc", "--recent-ttl", "48h", "--forward-url", "http://outback:8080",
		"--forward-token-file", "/run/tok", "--cdx-writes-open"}); err != nil {
		t.Fatal(err)
	}
	if c.Crawl != "dc" || c.RecentTTL != 48*time.Hour || c.CDXAddr != DefaultCDXAddr || !c.ForwardFailures ||
		c.Batch != DefaultBatch || c.Consumers != DefaultConsumers || c.ForwardURL != "http://outback:8080" ||
		c.ForwardTokenFile != "/run/tok" || !c.CDXWritesOpen {
		t.Errorf("config %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
	if c.Group() != "trawler-cdxwriter-dc" || c.ForwardGroup() != "trawler-cdxforward-dc" || c.Topic() != "dc.crawled" ||
		c.DLQTopic() != "dc.dlq" || c.Collection() != "dc" || !strings.HasSuffix(c.IndexDir(), "cdx/index") {
		t.Errorf("names %s %s %s %s %s %s", c.Group(), c.ForwardGroup(), c.Topic(), c.DLQTopic(), c.Collection(), c.IndexDir())
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{Crawl: "fc", Stream: "npld", DataDir: "d", CDXAddr: ":8081"}
	cases := []struct {
		mod     func(*Config)
		wantErr string
	}{
		{func(c *Config) { c.Crawl = "xx" }, `crawl "xx"`},
		{func(c *Config) { c.Stream = "" }, `stream ""`},
		{func(c *Config) { c.Stream = "other" }, `stream "other"`},
		{func(c *Config) { c.DataDir = "" }, "data directory"},
		{func(c *Config) { c.CDXAddr = "8081" }, "cdx-addr"},
		{func(c *Config) { c.ForwardURL = "outback:8080" }, "forward-url"},
		{func(c *Config) { c.ForwardURL = "http://" }, "forward-url"},
		{func(c *Config) { c.ForwardTokenFile = "tok" }, "forward-token-file is set but forward-url is not"},
		{func(c *Config) { c.RecentTTL = -time.Hour }, "recent-ttl"},
		{func(c *Config) { c.Batch = -1 }, "batch"},
		{func(c *Config) { c.Consumers = -1 }, "consumers"},
	}
	for _, tc := range cases {
		c := good
		tc.mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%+v: err %v, want %q", c, err, tc.wantErr)
		}
		if _, err := New(c, Deps{Kafka: kafka.Config{Brokers: []string{"127.0.0.1:9092"}}}); err == nil {
			t.Errorf("New accepted %+v", c)
		}
	}
	if err := good.Validate(); err != nil {
		t.Error(err)
	}
	if _, err := New(good, Deps{Kafka: kafka.Config{Brokers: []string{"127.0.0.1:9092"}}}); err == nil ||
		!strings.Contains(err.Error(), "no Redis client") {
		t.Errorf("New without Redis: %v", err)
	}
	if _, err := New(good, Deps{}); err == nil || !strings.Contains(err.Error(), "kafka") {
		t.Errorf("New without brokers: %v", err)
	}
}
