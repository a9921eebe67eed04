package profile

import (
	"errors"
	"fmt"
)

// Seen filter kinds (ARCHITECTURE.md 5.4).
const (
	SeenRecently = "recentlySeen"
	SeenBloom    = "bloom"
)

// Frontier settings: queueing, retries and the seen filter. Names follow
// Heritrix where it has one (queueAssignmentPolicy.parallelQueues,
// preferenceDepthHops, maxRetries, retryDelaySeconds).
type Frontier struct {
	// ParallelQueues is how many URIs of one host may be in flight at once.
	ParallelQueues int `yaml:"parallelQueues"`
	// PreferenceDepthHops: URIs within this many hops of a seed go ahead of
	// deeper ones in their host queue; -1 turns the preference off.
	PreferenceDepthHops int `yaml:"preferenceDepthHops"`
	MaxRetries          int `yaml:"maxRetries"`
	RetryDelaySeconds   int `yaml:"retryDelaySeconds"`
	// RetryServerErrors retries 5xx responses like connection failures.
	RetryServerErrors bool `yaml:"retryServerErrors"`
	// MaxPerHostBandwidthUsageKbSec caps the average download rate per host
	// (Heritrix's name); 0 means no cap.
	MaxPerHostBandwidthUsageKbSec int64 `yaml:"maxPerHostBandwidthUsageKbSec"`
	// SeenFilter is recentlySeen (frequent crawl) or bloom (domain crawl).
	SeenFilter string `yaml:"seenFilter"`
	// RecrawlIntervalSeconds: a URI crawled more recently than this is not
	// admitted again (recentlySeen), unless the launch timestamp it
	// inherits is newer than its last crawl. 0 means only such a launch
	// makes a crawled URI due again.
	RecrawlIntervalSeconds int64 `yaml:"recrawlInterval"`
	// RecrawlAdaptive (the recrawl-adaptive sheet) lets each URL's own
	// change history set when it is due again, as StormCrawler's
	// AdaptiveScheduler does: its interval starts at recrawlInterval
	// (clamped to the bounds below), is multiplied by
	// recrawlIncreaseFactor after a fetch that found it unchanged
	// (identical payload, or 304) up to recrawlMaxInterval, and by
	// recrawlDecreaseFactor after one that found it changed down to
	// recrawlMinInterval. The interval is kept in the recently-crawled
	// DB. A launch still fetches its seeds; below them a URL whose
	// interval has not run out is not fetched again, whatever the launch
	// timestamp it inherits (docs/frontier.md, "Adaptive recrawl").
	RecrawlAdaptive           bool    `yaml:"recrawlAdaptive"`
	RecrawlMinIntervalSeconds int64   `yaml:"recrawlMinInterval"`
	RecrawlMaxIntervalSeconds int64   `yaml:"recrawlMaxInterval"`
	RecrawlIncreaseFactor     float64 `yaml:"recrawlIncreaseFactor"`
	RecrawlDecreaseFactor     float64 `yaml:"recrawlDecreaseFactor"`
	// KeepOutlinks stores each full capture's outlinks in the
	// recently-crawled DB, so that a page found unchanged later (304 Not
	// Modified) still leads to what it linked to: a relaunch then
	// recrawls everything the first crawl reached. Heritrix follows
	// nothing from a 304. A few hundred bytes per HTML page in Redis;
	// pointless with the bloom seen filter, which admits a URI once.
	KeepOutlinks bool `yaml:"keepOutlinks"`
	// BloomExpectedURIs and BloomFalsePositiveRate size the Bloom filter.
	BloomExpectedURIs      int64   `yaml:"bloomExpectedUris"`
	BloomFalsePositiveRate float64 `yaml:"bloomFalsePositiveRate"`
	// Shards splits the frontier over this many Redis Cluster hash tags
	// (1..1024), so that a cluster spreads it over its masters; 1 keeps it
	// in one slot, which suits a single Redis. Every role opening the
	// frontier must agree, hence a profile setting and not a flag; the
	// count is recorded in Redis when the frontier is created and a
	// frontier opened with another count refuses to run
	// (docs/frontier.md, "Shards").
	Shards int `yaml:"shards"`
}

// MaxShards is the largest frontier.shards.
const MaxShards = 1024

func defaultFrontier() Frontier {
	return Frontier{
		ParallelQueues: 1, PreferenceDepthHops: -1, MaxRetries: 10, RetryDelaySeconds: 900,
		SeenFilter: SeenRecently, RecrawlIntervalSeconds: 365 * 24 * 3600, KeepOutlinks: true,
		RecrawlMinIntervalSeconds: 3600, RecrawlMaxIntervalSeconds: 365 * 24 * 3600,
		RecrawlIncreaseFactor: 1.5, RecrawlDecreaseFactor: 0.5,
		BloomExpectedURIs: 1_000_000_000, BloomFalsePositiveRate: 1e-4, Shards: 1,
	}
}

func (f Frontier) validate() error {
	var errs []error
	if f.ParallelQueues < 1 {
		errs = append(errs, errors.New("frontier.parallelQueues: must be >= 1"))
	}
	if f.MaxRetries < 0 || f.RetryDelaySeconds < 0 {
		errs = append(errs, errors.New("frontier: maxRetries and retryDelaySeconds must be >= 0"))
	}
	if f.MaxPerHostBandwidthUsageKbSec < 0 || f.RecrawlIntervalSeconds < 0 {
		errs = append(errs, errors.New("frontier: maxPerHostBandwidthUsageKbSec and recrawlInterval must be >= 0"))
	}
	if f.RecrawlMinIntervalSeconds < 1 || f.RecrawlMaxIntervalSeconds < f.RecrawlMinIntervalSeconds {
		errs = append(errs, fmt.Errorf("frontier: need 1 <= recrawlMinInterval (%d) <= recrawlMaxInterval (%d)",
			f.RecrawlMinIntervalSeconds, f.RecrawlMaxIntervalSeconds))
	}
	if !(f.RecrawlIncreaseFactor >= 1) || !(f.RecrawlDecreaseFactor > 0 && f.RecrawlDecreaseFactor <= 1) {
		errs = append(errs, fmt.Errorf("frontier: need recrawlIncreaseFactor (%g) >= 1 and 0 < recrawlDecreaseFactor (%g) <= 1",
			f.RecrawlIncreaseFactor, f.RecrawlDecreaseFactor))
	}
	if f.SeenFilter != SeenRecently && f.SeenFilter != SeenBloom {
		errs = append(errs, fmt.Errorf("frontier.seenFilter: %q is not %s or %s", f.SeenFilter, SeenRecently, SeenBloom))
	}
	if f.BloomExpectedURIs < 1 || f.BloomFalsePositiveRate <= 0 || f.BloomFalsePositiveRate >= 1 {
		errs = append(errs, errors.New("frontier: bloomExpectedUris must be >= 1 and 0 < bloomFalsePositiveRate < 1"))
	}
	if f.Shards < 1 || f.Shards > MaxShards {
		errs = append(errs, fmt.Errorf("frontier.shards: %d is not in 1..%d", f.Shards, MaxShards))
	}
	return errors.Join(errs...)
}

// Quotas are Heritrix QuotaEnforcer limits; -1 means no limit. "server" is
// host:port, "host" the host name, "source" the source tag (target) of the
// seed a URI descends from. Kb are kilobytes (1024 bytes).
type Quotas struct {
	ServerMaxFetchSuccesses int64 `yaml:"serverMaxFetchSuccesses"`
	ServerMaxSuccessKb      int64 `yaml:"serverMaxSuccessKb"`
	ServerMaxFetchResponses int64 `yaml:"serverMaxFetchResponses"`
	ServerMaxAllKb          int64 `yaml:"serverMaxAllKb"`
	HostMaxFetchSuccesses   int64 `yaml:"hostMaxFetchSuccesses"`
	HostMaxSuccessKb        int64 `yaml:"hostMaxSuccessKb"`
	HostMaxFetchResponses   int64 `yaml:"hostMaxFetchResponses"`
	HostMaxAllKb            int64 `yaml:"hostMaxAllKb"`
	SourceMaxFetchSuccesses int64 `yaml:"sourceMaxFetchSuccesses"`
	SourceMaxSuccessKb      int64 `yaml:"sourceMaxSuccessKb"`
	SourceMaxFetchResponses int64 `yaml:"sourceMaxFetchResponses"`
	SourceMaxAllKb          int64 `yaml:"sourceMaxAllKb"`
}

func defaultQuotas() Quotas {
	return Quotas{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
}

func (q Quotas) validate() error {
	for _, v := range []int64{q.ServerMaxFetchSuccesses, q.ServerMaxSuccessKb, q.ServerMaxFetchResponses, q.ServerMaxAllKb,
		q.HostMaxFetchSuccesses, q.HostMaxSuccessKb, q.HostMaxFetchResponses, q.HostMaxAllKb,
		q.SourceMaxFetchSuccesses, q.SourceMaxSuccessKb, q.SourceMaxFetchResponses, q.SourceMaxAllKb} {
		if v < -1 {
			return errors.New("quotas: each quota must be -1 (none) or >= 0")
		}
	}
	return nil
}

// Limits end a crawl (Heritrix CrawlLimitEnforcer); 0 means no limit.
// They count crawl-wide, over every worker, in the frontier's totals.
type Limits struct {
	MaxDocumentsDownload int64 `yaml:"maxDocumentsDownload"`
	MaxBytesDownload     int64 `yaml:"maxBytesDownload"`
	// MaxNovelUrls and MaxNovelBytes count only novel URIs: those with an
	// HTTP response (or a DNS record) that is not a revisit, neither
	// duplicate:digest nor server-not-modified (Heritrix's
	// CrawledBytesHistotable novelCount and novel, the bytes being the
	// recorded size, headers included).
	MaxNovelUrls  int64 `yaml:"maxNovelUrls"`
	MaxNovelBytes int64 `yaml:"maxNovelBytes"`
	// MaxTimeSeconds counts from the crawl's start, which the first worker
	// to run records in Redis; workers started later share it.
	MaxTimeSeconds int64 `yaml:"maxTimeSeconds"`
}

func (l Limits) validate() error {
	if l.MaxDocumentsDownload < 0 || l.MaxBytesDownload < 0 || l.MaxTimeSeconds < 0 ||
		l.MaxNovelUrls < 0 || l.MaxNovelBytes < 0 {
		return errors.New("limits: must be >= 0 (0 means none)")
	}
	return nil
}
