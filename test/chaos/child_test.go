//go:build chaos

package chaos_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/services/cdxwriter"
	"github.com/trawler-crawl/trawler/services/worker"
)

// childEnv carries a childSpec to a copy of the test binary, which then
// runs one role until SIGTERM instead of the tests: the processes the
// suite kills are real processes with their own Redis and Kafka clients.
const childEnv = "TRAWLER_CHAOS_CHILD"

// childSpec is what a worker or cdxwriter process needs.
type childSpec struct {
	Role    string            `json:"role"` // "worker" or "cdxwriter"
	Redis   string            `json:"redis"`
	Brokers []string          `json:"brokers"`
	Dir     string            `json:"dir"`
	ID      string            `json:"id"`
	Hosts   map[string]string `json:"hosts"`
	Clamd   string            `json:"clamd"`
	// MinFreeBytes is the worker's disk-guard threshold (0: none).
	MinFreeBytes int64  `json:"minFreeBytes"`
	CDXAddr      string `json:"cdxAddr"`
}

// Timings shared by the children and the parent's checks.
const (
	// uriLease is the frontier lease of a claimed URI: a killed worker's
	// claims come back after it.
	uriLease = 5 * time.Second
	// identityLease is how long a killed worker's identity stays taken;
	// its restart waits for the key to expire.
	identityLease = 3 * time.Second
	threads       = 4
)

// runChild runs the role of the spec in raw until SIGTERM.
func runChild(c childSpec) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// No ping at start: the client reconnects by itself, which is what a
	// Redis restart in the middle of the run needs anyway.
	rdb := redis.NewClient(&redis.Options{Addr: c.Redis})
	defer func() { _ = rdb.Close() }()
	kc := kafka.Config{Brokers: c.Brokers, ClientID: "chaos-" + c.Role + "-" + c.ID,
		SessionTimeout: 6 * time.Second, RebalanceTimeout: 6 * time.Second}
	var err error
	switch c.Role {
	case "worker":
		err = runWorker(ctx, c, kc, rdb, log)
	case "cdxwriter":
		err = runCDXWriter(ctx, c, kc, rdb, log)
	default:
		err = fmt.Errorf("unknown role %q", c.Role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "child %s %s: %v\n", c.Role, c.ID, err)
		return 1
	}
	return 0
}

// crawlProfile crawls fast (10 ms between a host's fetches) and scans
// every capture through the suite's clamd proxy: a clamd that does not
// answer within 2 s holds the URI for a retry 1 s later.
func crawlProfile(clamd string) profile.Profile {
	p := profile.Default()
	p.Politeness = profile.Politeness{MinDelayMs: 10, MaxDelayMs: 10}
	p.Fetch.AllowPrivateAddresses = true
	p.Frontier.RetryDelaySeconds = 1
	p.ClamAV.Address = clamd
	p.ClamAV.TimeoutSeconds = 2
	p.ClamAV.Retries = 0
	p.ClamAV.OnUnavailable = profile.ClamAVHold
	return p
}

func workerConfig(dir, id string, minFree int64) worker.Config {
	return worker.Config{Crawl: "fc", Stream: "npld", ID: id, Threads: threads, DataDir: dir, Lease: uriLease,
		IdentityLease: identityLease, JanitorPeriod: time.Hour,
		Disk: worker.DiskConfig{MinFreeBytes: minFree, CheckInterval: 200 * time.Millisecond}}
}

func runWorker(ctx context.Context, c childSpec, kc kafka.Config, rdb *redis.Client, log *slog.Logger) error {
	w, err := worker.New(workerConfig(c.Dir, c.ID, c.MinFreeBytes), worker.Deps{Profile: crawlProfile(c.Clamd), Kafka: kc,
		Redis: rdb, Resolver: staticHosts(c.Hosts), Logger: log, Registerer: prometheus.NewRegistry(), Version: "chaos"})
	if err != nil {
		return fmt.Errorf("new worker: %w", err)
	}
	return w.Run(ctx)
}

func runCDXWriter(ctx context.Context, c childSpec, kc kafka.Config, rdb *redis.Client, log *slog.Logger) error {
	// Small batches, so the index follows the crawl closely and a kill
	// falls between batches as often as inside one.
	w, err := cdxwriter.New(cdxwriter.Config{Crawl: "fc", Stream: "npld", DataDir: c.Dir, CDXAddr: c.CDXAddr, Batch: 200, Consumers: 1},
		cdxwriter.Deps{Kafka: kc, Redis: rdb, Logger: log, Registerer: prometheus.NewRegistry(), LagInterval: time.Second})
	if err != nil {
		return fmt.Errorf("new cdxwriter: %w", err)
	}
	return w.Run(ctx)
}

// staticHosts resolves the site's names to the addresses the parent found.
type staticHosts map[string]string

func (h staticHosts) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ip, ok := h[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}
