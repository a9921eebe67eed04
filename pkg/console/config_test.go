package console

import (
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/explain"
)

// The wayback template must be an absolute http(s) URL holding {url}; a
// bad one is refused with the reason, and a good one fills a capture's
// replay link.
func TestConfigValidateAndReplayLink(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string // "" valid
	}{
		{Config{}, ""},
		{Config{WaybackURL: "http://localhost:8080/wayback/{timestamp}/{url}"}, ""},
		{Config{WaybackURL: "https://replay.example/{url}"}, ""},
		{Config{WaybackURL: "http://localhost:8080/wayback/{timestamp}/"}, "has no {url} to replace"},
		{Config{WaybackURL: "ftp://x/{url}"}, "want an absolute http(s) URL"},
		{Config{WaybackURL: "/wayback/{url}"}, "want an absolute http(s) URL"},
		{Config{WaybackURL: "http://%zz/{url}"}, "invalid URL escape"},
		{Config{SessionTTL: -time.Second}, "is negative"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
	c := &Console{cfg: Config{WaybackURL: "http://localhost:8080/wayback/{timestamp}/{url}"}}
	cp := explain.Capture{Timestamp: "20261128080000", URL: "http://a.test/x?y=1"}
	if got := c.replayLink(cp); got != "http://localhost:8080/wayback/20261128080000/http://a.test/x?y=1" {
		t.Fatalf("replay link: %s", got)
	}
	if got := (&Console{}).replayLink(cp); got != "" {
		t.Fatalf("replay link without a template: %s", got)
	}
}
