package provenance

import (
	"flag"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	defaults := func() Config {
		var c Config
		c.RegisterFlags(flag.NewFlagSet("t", flag.ContinueOnError))
		return c
	}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"defaults", func(*Config) {}, ""},
		{"dc ignores stream", func(c *Config) { c.Crawl, c.Stream = "dc", "" }, ""},
		{"bad crawl", func(c *Config) { c.Crawl = "xx" }, `crawl "xx"`},
		{"bad stream", func(c *Config) { c.Stream = "x" }, `stream "x"`},
		{"no data", func(c *Config) { c.DataDir = "" }, "data directory"},
		{"poll", func(c *Config) { c.PollInterval = 0 }, "poll-interval"},
		{"settle", func(c *Config) { c.Settle = -1 }, "settle"},
		{"prefix", func(c *Config) { c.WARCPrefix = "a/b" }, "warc-prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaults()
			tc.mod(&c)
			err := c.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
	c := defaults()
	if c.warcDir() != "trawler-data/warcs/fc-npld-metadata" || c.logDirs()[0] != "trawler-data/logs/fc-npld" || c.StatsTopic() != "fc.harveststats" {
		t.Errorf("derived paths: %s %v %s", c.warcDir(), c.logDirs(), c.StatsTopic())
	}
}
