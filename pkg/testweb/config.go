package testweb

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
)

// Defaults applied by Generate to zero fields of Config.
const (
	DefaultHosts          = 4
	DefaultPagesPerHost   = 100
	DefaultLargeFileBytes = 3 << 20
	// MaxHosts bounds Config.Hosts: each host needs a listener and an IP.
	MaxHosts = 1000
	// MaxPagesPerHost bounds Config.PagesPerHost.
	MaxPagesPerHost = 1_000_000
)

// defaultIPBase is the address of the first site host. 127.0.0.1 is left
// alone so a developer's own services on localhost never collide.
func defaultIPBase() netip.Addr { return netip.AddrFrom4([4]byte{127, 0, 0, 2}) }

// Config describes a synthetic web. Zero fields take the documented defaults.
type Config struct {
	// Seed selects the site: the same seed gives the same hosts, paths,
	// links and bytes.
	Seed int64
	// Hosts is the number of site hosts (default 4, at most MaxHosts).
	Hosts int
	// PagesPerHost is the number of numbered HTML pages per host (default
	// 100). About one in twenty of them (when there are at least 20) is
	// listed only in the sitemaps.
	PagesPerHost int
	// Trap links an infinite calendar (/calendar/YYYY/MM with prev and next
	// links) from one page of one host.
	Trap bool
	// Hostile adds the host hostile.test with misbehaving endpoints (see
	// the Path* constants) and links its index from one page.
	Hostile bool
	// LargeFileBytes is the size of each host's /files/large.bin (default
	// 3 MiB). The bytes are generated while they are sent, never held.
	LargeFileBytes int64
	// Scripted adds pages under /scripted/ to every site host for the
	// browser renderer (scripted.go): links only script makes, data
	// loaded by fetch(), an image loaded lazily on scroll, requests to
	// forbidden addresses, and pages with 20 subresources. They are linked
	// from nowhere: a test hands them to the renderer directly.
	Scripted bool
	// PageBytes, when non-zero, pads every HTML document with more
	// paragraphs of text until it is at least this long (benchmarks use
	// 10 KB pages); zero leaves documents as they are.
	PageBytes int
	// VolatileOneIn makes one in this many HTML documents (by hash)
	// change with every epoch (Server.SetEpoch); default 5, one in five.
	VolatileOneIn int
	// QueryVariantOneIn gives one in this many numbered pages (by hash) a
	// link to another page under a query string (?ref=pN) that the server
	// ignores, so the same payload is served under two URLs; default 12.
	QueryVariantOneIn int
	// IPBase is the address of the first site host (default 127.0.0.2).
	// Host i listens on IPBase+i, hostile.test on IPBase+Hosts. All must lie
	// in 127.0.0.0/8.
	IPBase netip.Addr
	// Port, when non-zero, is the port every host must listen on; Start
	// fails if it cannot be bound. Zero picks a free port shared by all
	// hosts when possible.
	Port int
	// Logger receives server errors; nil discards them.
	Logger *slog.Logger
}

// withDefaults returns cfg with zero fields replaced by defaults.
func (cfg Config) withDefaults() Config {
	if cfg.Hosts == 0 {
		cfg.Hosts = DefaultHosts
	}
	if cfg.PagesPerHost == 0 {
		cfg.PagesPerHost = DefaultPagesPerHost
	}
	if cfg.LargeFileBytes == 0 {
		cfg.LargeFileBytes = DefaultLargeFileBytes
	}
	if cfg.VolatileOneIn == 0 {
		cfg.VolatileOneIn = 5
	}
	if cfg.QueryVariantOneIn == 0 {
		cfg.QueryVariantOneIn = 12
	}
	if !cfg.IPBase.IsValid() {
		cfg.IPBase = defaultIPBase()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// Validate reports every problem with cfg (after defaults) in one error.
func (cfg Config) Validate() error {
	var errs []error
	if cfg.Hosts < 0 || cfg.Hosts > MaxHosts {
		errs = append(errs, fmt.Errorf("hosts: %d out of range 1..%d", cfg.Hosts, MaxHosts))
	}
	if cfg.PagesPerHost < 0 || cfg.PagesPerHost > MaxPagesPerHost {
		errs = append(errs, fmt.Errorf("pagesPerHost: %d out of range 1..%d", cfg.PagesPerHost, MaxPagesPerHost))
	}
	if cfg.PageBytes < 0 {
		errs = append(errs, fmt.Errorf("pageBytes: %d is negative", cfg.PageBytes))
	}
	if cfg.LargeFileBytes < 0 {
		errs = append(errs, fmt.Errorf("largeFileBytes: %d is negative", cfg.LargeFileBytes))
	}
	if cfg.VolatileOneIn < 0 || cfg.QueryVariantOneIn < 0 {
		errs = append(errs, fmt.Errorf("volatileOneIn %d and queryVariantOneIn %d: must be >= 1 (0: the default)",
			cfg.VolatileOneIn, cfg.QueryVariantOneIn))
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		errs = append(errs, fmt.Errorf("port: %d out of range 0..65535", cfg.Port))
	}
	if err := validateIPs(cfg.IPBase, cfg.Hosts); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("testweb config: %w", err)
	}
	return nil
}

// validateIPs checks that base and the hosts+1 addresses after it (the last
// one for hostile.test) stay inside 127.0.0.0/8, so nothing leaves loopback.
func validateIPs(base netip.Addr, hosts int) error {
	if !base.IsValid() {
		return nil // defaults not applied yet; Generate applies them first
	}
	if !base.Is4() || base.As4()[0] != 127 {
		return fmt.Errorf("IPBase: %s is not an IPv4 address in 127.0.0.0/8", base)
	}
	if base.As4() == [4]byte{127, 0, 0, 0} {
		return fmt.Errorf("IPBase: %s is the network address", base)
	}
	if hosts < 0 || hosts > MaxHosts {
		return nil // reported by the Hosts check
	}
	last := base
	for range hosts {
		last = last.Next()
	}
	if !last.IsValid() || last.As4()[0] != 127 || last.As4() == [4]byte{127, 255, 255, 255} {
		return fmt.Errorf("IPBase: %s plus %d hosts runs past 127.255.255.254", base, hosts)
	}
	return nil
}

// Site is a generated synthetic web: a pure function of its Config. It holds
// no pages; everything is computed when asked for.
type Site struct {
	cfg        Config
	sections   int // number of /secN/ directories per host
	linked     int // pages 0..linked-1 are reachable by links
	images     int // number of /img/N.png per host
	trapHost   int // host carrying the calendar link (when Trap)
	hostileSrc int // host whose page links hostile.test (when Hostile)

	pngBuffers pngBufferPool // reused by renderPNG across requests
}

// Generate validates cfg, applies defaults and returns the site it describes.
func Generate(cfg Config) (*Site, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Site{cfg: cfg}
	p := cfg.PagesPerHost
	s.sections = min(max((p+19)/20, 1), 8)
	s.linked = p
	if p >= 20 {
		s.linked = p - p/20
	}
	s.images = max(4, p/4)
	s.trapHost = int(s.hashOf(saltTrapHost) % uint64(cfg.Hosts))
	s.hostileSrc = int(s.hashOf(saltHostileHost) % uint64(cfg.Hosts))
	return s, nil
}

// Config returns the configuration with defaults applied.
func (s *Site) Config() Config { return s.cfg }

// HostName returns the DNS name of site host i (0-based): odd-numbered sites
// carry a www. prefix (www.site1.test, site2.test, www.site3.test, ...).
func (s *Site) HostName(i int) string {
	n := i + 1
	if n%2 == 1 {
		return fmt.Sprintf("www.site%d.test", n)
	}
	return fmt.Sprintf("site%d.test", n)
}

// HostileName is the DNS name of the hostile host.
const HostileName = "hostile.test"
