package standalone

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/trawler-crawl/trawler/internal/refusedport"
	"github.com/trawler-crawl/trawler/pkg/frontier"
)

// downResolver resolves every name to loopback.
type downResolver struct{}

func (downResolver) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
}

// A seed whose server refuses connections waits retryDelaySeconds between
// attempts. --until-idle waits for it (the run here is cut by its
// context); with --until-idle-ignore-retries the run ends on its own,
// leaving the URI queued.
func TestUntilIdleAndRetries(t *testing.T) {
	port := refusedport.Port(t) // connections are refused (-2, retried)
	seed := fmt.Sprintf("http://down.test:%d/", port)
	cases := []struct {
		name          string
		ignoreRetries bool
		wantEnded     string
	}{
		{"until-idle waits for retries", false, endedInterrupted},
		{"ignore retries", true, endedIdle},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := testProfile()
			p.Frontier.MaxRetries, p.Frontier.RetryDelaySeconds = 5, 3600
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
			defer cancel()
			cfg := Config{DataDir: t.TempDir(), Seeds: []string{seed}, UntilIdle: true, UntilIdleIgnoreRetries: tc.ignoreRetries,
				KafkaListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Crawl: "fc", Stream: "npld", Threads: 2, Partitions: 1,
				TimeZone: "Europe/London"}
			sum, err := Run(ctx, cfg, Deps{Profile: p, Resolver: downResolver{},
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: prometheus.NewRegistry(), Version: "test"})
			if tc.wantEnded == endedInterrupted {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("run ended with %v before its deadline; want it to wait for the retry", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if sum == nil || sum.EndedBy != tc.wantEnded || sum.Queued != 1 {
				t.Fatalf("summary %+v; want ended %q with the seed still queued", sum, tc.wantEnded)
			}
		})
	}
}

// The progress line says how many URIs wait for a retry and when the
// first is due, and says nothing of retries when none waits.
func TestProgressAttrs(t *testing.T) {
	now := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	got := fmt.Sprint(progressAttrs(frontier.Stats{Queued: 3, SnoozedHosts: 1, RetryHosts: 1, RetryURIs: 3, NextRetry: now.Add(90 * time.Second)}, now))
	want := "[queued 3 in_flight 0 ready_hosts 0 snoozed_hosts 1 waiting_for_retry 3 retry_hosts 1 next_retry_in 1m30s]"
	if got != want {
		t.Errorf("progress with retries:\n%s\nwant\n%s", got, want)
	}
	got = fmt.Sprint(progressAttrs(frontier.Stats{Queued: 2, ReadyHosts: 1}, now))
	if want := "[queued 2 in_flight 0 ready_hosts 1 snoozed_hosts 0]"; got != want {
		t.Errorf("progress without retries:\n%s\nwant\n%s", got, want)
	}
}
