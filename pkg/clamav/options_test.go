package clamav_test

import (
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/clamav"
)

func TestParseAddress(t *testing.T) {
	good := []struct{ in, network, addr string }{
		{"tcp://127.0.0.1:3310", "tcp", "127.0.0.1:3310"},
		{"clamd:3310", "tcp", "clamd:3310"},
		{"tcp://[::1]:3310", "tcp", "[::1]:3310"},
		{"unix:///run/clamav/clamd.ctl", "unix", "/run/clamav/clamd.ctl"},
	}
	for _, tc := range good {
		n, a, err := clamav.ParseAddress(tc.in)
		if err != nil || n != tc.network || a != tc.addr {
			t.Errorf("ParseAddress(%q) = %q, %q, %v; want %q, %q", tc.in, n, a, err, tc.network, tc.addr)
		}
	}
	bad := []struct{ in, want string }{
		{"", "empty"},
		{"clamd", "missing port"},
		{":3310", "need both host and port"},
		{"tcp://clamd", "missing port"},
		{"tcp://clamd:3310/path", "only host:port"},
		{"unix://run/clamd.sock", "unix:///absolute/path"},
		{"unix://", "unix:///absolute/path"},
		{"http://clamd:3310", `scheme "http"`},
		{"tcp://%zz:1", "invalid URL escape"},
	}
	for _, tc := range bad {
		_, _, err := clamav.ParseAddress(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "clamav address") {
			t.Errorf("ParseAddress(%q) err = %v, want it to mention %q", tc.in, err, tc.want)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	cases := []struct {
		o    clamav.Options
		want string
	}{
		{clamav.Options{}, "empty"},
		{clamav.Options{Address: "localhost:3310", Timeout: -time.Second}, "Timeout"},
		{clamav.Options{Address: "localhost:3310", Retries: -1}, "Retries"},
		{clamav.Options{Address: "localhost:3310", RetryDelay: -1}, "RetryDelay"},
		{clamav.Options{Address: "localhost:3310", StreamMaxLength: -1}, "StreamMaxLength"},
		{clamav.Options{Address: "localhost:3310", ChunkSize: -1}, "ChunkSize"},
	}
	for _, tc := range cases {
		if _, err := clamav.New(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) err = %v, want it to mention %q", tc.o, err, tc.want)
		}
	}
	if _, err := clamav.New(clamav.Options{Address: "localhost:3310"}); err != nil {
		t.Errorf("New with defaults: %v", err)
	}
}
