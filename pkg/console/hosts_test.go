package console

import (
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/frontier"
)

// A host's state in words names the first thing that keeps it waiting:
// an operator's pause, then a back-off with the status that asked for it,
// then having nothing to fetch, then politeness.
func TestWaitReason(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	later := now.Add(time.Minute)
	tests := []struct {
		name string
		h    frontier.HostInfo
		want string
	}{
		{"paused wins", frontier.HostInfo{Paused: true, Queued: 3, BackOffUntil: later}, "paused by an operator"},
		{"backing off", frontier.HostInfo{Queued: 3, BackOffs: 2, BackOffStatus: 429, BackOffUntil: later, NextFetch: later},
			"backing off after 2 answer(s) in a row with status 429"},
		{"challenged", frontier.HostInfo{Queued: 3, BackOffs: 1, BackOffReason: "challenge", BackOffUntil: later},
			"challenged: backing off after 1 bot-challenge page(s) in a row"},
		{"back-off over", frontier.HostInfo{Queued: 3, BackOffs: 1, BackOffStatus: 503, BackOffUntil: now.Add(-time.Second), Ready: true},
			"ready to be claimed"},
		{"exhausted", frontier.HostInfo{}, "exhausted"},
		{"busy", frontier.HostInfo{InFlight: 1}, "busy: its URIs are in flight"},
		{"snoozed", frontier.HostInfo{Queued: 1, NextFetch: later}, "snoozed: politeness delay until 2026-11-28T09:01:00Z"},
		{"ready", frontier.HostInfo{Queued: 1, Ready: true}, "ready to be claimed"},
		{"all parallel queues busy", frontier.HostInfo{Queued: 1, InFlight: 2}, "parallel queues are all in flight"},
	}
	for _, tt := range tests {
		if got := waitReason(tt.h, now); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
