package worker

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/trawler-crawl/trawler/pkg/clamav"
	"github.com/trawler-crawl/trawler/pkg/cookies"
	"github.com/trawler-crawl/trawler/pkg/dns"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/robots"
)

// fetchParts are the fetch chain's collaborators. Everything they keep
// between URIs (robots rules, cookies, login state) lives in Redis, so any
// worker can crawl any host; the DNS cache is a cache.
type fetchParts struct {
	fetcher *fetch.Fetcher
	dns     *dns.Resolver
	robots  *robots.Cache
	jar     *cookies.Jar
	scanner *clamav.Client // nil: scanning is off
	ua      string
	// statePrefix prefixes the Redis keys of this stream's host state.
	statePrefix string
}

func seconds(n int64) time.Duration { return time.Duration(n) * time.Second }

func newFetchParts(cfg Config, d Deps, p profile.Profile) (fetchParts, error) {
	fp := fetchParts{statePrefix: "trawler:" + cfg.Name() + ":", ua: p.UserAgent(d.Version)}
	o := dns.Options{MinValidity: seconds(p.DNS.IPValidityDurationSeconds), Logger: d.Logger, Registerer: d.Registerer}
	if d.Resolver != nil {
		o.Static = d.Resolver
	}
	var err error
	if fp.dns, err = dns.New(o); err != nil {
		return fp, fmt.Errorf("worker dns: %w", err)
	}
	fp.robots, err = robots.NewCache(d.Redis, fp.statePrefix+"robots:", robots.CacheOptions{
		Validity: seconds(p.Robots.ValidityDurationSeconds), Logger: d.Logger, Registerer: d.Registerer,
	})
	if err != nil {
		return fp, fmt.Errorf("worker robots cache: %w", err)
	}
	fp.jar = cookies.New(d.Redis, fp.statePrefix+"cookies:", cookies.Options{Logger: d.Logger})
	if err := loadCookies(fp.jar, p.Fetch.CookieFile, d); err != nil {
		return fp, err
	}
	creds := make([]fetch.Credential, len(p.Credentials.HTTP))
	for i, c := range p.Credentials.HTTP {
		creds[i] = fetch.Credential{Domain: c.Domain, Realm: c.Realm, Login: c.Login, Password: c.Password.Reveal()}
	}
	allowed, err := profile.AllowedPrefixes(p.Fetch.AllowAddresses)
	if err != nil {
		return fp, fmt.Errorf("worker: %w", err)
	}
	fc := fetch.Config{
		UserAgent:      fp.ua,
		ConnectTimeout: seconds(int64(p.Fetch.ConnectTimeoutSeconds)),
		ReadTimeout:    seconds(int64(p.Fetch.ReadTimeoutSeconds)),
		TotalTimeout:   seconds(int64(p.Fetch.TotalTimeoutSeconds)),
		MaxLengthBytes: p.Fetch.MaxLengthBytes,
		SpoolThreshold: p.Fetch.SpoolThresholdBytes,
		SpoolDir:       cfg.spoolDirOf(cfg.ID),
		AllowPrivate:   p.Fetch.AllowPrivateAddresses,
		AllowAddresses: allowed,
		KeepAlive:      p.Fetch.KeepAlive,
		// A host may be fetched by as many threads at once as it has
		// parallel queues, and each needs its own connection to reuse.
		MaxIdlePerHost: max(fetch.DefaultMaxIdlePerHost, p.Frontier.ParallelQueues),
		Proxy:          p.Fetch.Proxy,
		Credentials:    creds,
		HTTP2:          p.Fetch.HTTP2,
	}
	if err := fc.Validate(); err != nil {
		return fp, fmt.Errorf("worker: %w", err)
	}
	fp.fetcher = fetch.New(fc, fp.dns)
	if p.ClamAV.Address == "" {
		d.Logger.Warn("virus scanning is off: no clamav.address in the profile and no --clamd-addr")
		return fp, nil
	}
	fp.scanner, err = clamav.New(clamav.Options{
		Address: p.ClamAV.Address, Timeout: seconds(int64(p.ClamAV.TimeoutSeconds)), Retries: p.ClamAV.Retries,
		StreamMaxLength: p.ClamAV.StreamMaxLengthBytes, Registerer: d.Registerer, Logger: d.Logger,
	})
	if err != nil {
		return fp, fmt.Errorf("worker clamav: %w", err)
	}
	return fp, nil
}

// close drops the idle keep-alive connections. Call it once no thread
// fetches any more.
func (fp fetchParts) close() {
	_ = fp.fetcher.Close()
}

// loadCookies loads the profile's Netscape cookie file into the shared
// jar; bad lines are reported and skipped, an unreadable file is an error.
func loadCookies(jar *cookies.Jar, path string, d Deps) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("worker cookie file: %w", err)
	}
	defer f.Close()
	n, err := jar.LoadNetscape(context.Background(), f)
	if err != nil {
		d.Logger.Warn("cookie file has bad lines; they were skipped", "file", path, "err", err)
	}
	d.Logger.Info("loaded cookies", "file", path, "cookies", n)
	return nil
}
