// Package profile holds a crawl profile: the crawl settings an operator
// keeps in a YAML file per crawl (Heritrix's crawler-beans equivalent).
// Parsing is strict: an unknown key is an error naming the key and line.
//
// Deployment settings (brokers, Redis, listeners, data directory) are not
// here; they come from flags and TRAWLER_* environment variables. The
// precedence is: built-in defaults < profile file < environment < flags.
package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/trawler-crawl/trawler/pkg/extract"
	"github.com/trawler-crawl/trawler/profiles"
)

// Profile is the whole set of crawl settings.
type Profile struct {
	Crawl       Crawl       `yaml:"crawl"`
	Politeness  Politeness  `yaml:"politeness"`
	Frontier    Frontier    `yaml:"frontier"`
	Quotas      Quotas      `yaml:"quotas"`
	Limits      Limits      `yaml:"limits"`
	Robots      Robots      `yaml:"robots"`
	DNS         DNS         `yaml:"dns"`
	Preselector Preselector `yaml:"preselector"`
	Fetch       Fetch       `yaml:"fetch"`
	Extract     Extract     `yaml:"extract"`
	Render      Render      `yaml:"render"`
	Scope       Scope       `yaml:"scope"`
	WARC        WARC        `yaml:"warc"`
	Dedup       Dedup       `yaml:"dedup"`
	ClamAV      ClamAV      `yaml:"clamav"`
	Credentials Credentials `yaml:"credentials"`
	Sheets      Sheets      `yaml:"sheets"`
	Provenance  Provenance  `yaml:"provenance"`
}

// Crawl names the crawl and says who runs it.
type Crawl struct {
	// Name goes into crawled events (crawl_name) and warcinfo records.
	Name string `yaml:"name"`
	// OperatorContactURL is substituted into the User-Agent so site owners
	// can reach the operator.
	OperatorContactURL string `yaml:"operatorContactUrl"`
	Operator           string `yaml:"operator"`
	// UserAgentTemplate may contain @VERSION@ and @OPERATOR_CONTACT_URL@.
	UserAgentTemplate string `yaml:"userAgentTemplate"`
}

// Politeness settings; see ARCHITECTURE.md 5.2.
type Politeness struct {
	DelayFactor                  float64 `yaml:"delayFactor"`
	MinDelayMs                   int64   `yaml:"minDelayMs"`
	MaxDelayMs                   int64   `yaml:"maxDelayMs"`
	RespectCrawlDelayUpToSeconds int64   `yaml:"respectCrawlDelayUpToSeconds"`
	// A host answering 429 or 503 backs off (Heritrix has no such
	// settings; named like its respectCrawlDelayUpToSeconds): for the
	// response's Retry-After up to MaxRetryAfterSeconds, or without one for
	// BackOffBaseMs doubling with each back-off in a row (with jitter) up to
	// BackOffMaxMs. A host answering anything else, or quiet for a day (or
	// BackOffMaxMs if longer) after its last back-off, starts again from
	// BackOffBaseMs. A URI whose capture the worker could not record
	// (a failed WARC write) waits the same doubling back-off, counted by
	// the worker's write failures in a row (services/worker/writeguard.go).
	MaxRetryAfterSeconds int64 `yaml:"maxRetryAfterSeconds"`
	BackOffBaseMs        int64 `yaml:"backOffBaseMs"`
	BackOffMaxMs         int64 `yaml:"backOffMaxMs"`
}

// Fetch settings.
type Fetch struct {
	ConnectTimeoutSeconds int   `yaml:"connectTimeoutSeconds"`
	ReadTimeoutSeconds    int   `yaml:"readTimeoutSeconds"`
	TotalTimeoutSeconds   int   `yaml:"totalTimeoutSeconds"`
	MaxLengthBytes        int64 `yaml:"maxLengthBytes"`
	// AllowPrivateAddresses lets workers fetch loopback, private and
	// link-local addresses. Only tests and the demo should set it.
	AllowPrivateAddresses bool `yaml:"allowPrivateAddresses"`
	// AllowAddresses are CIDR ranges fetched although they are loopback,
	// private or link-local (one test site), the rest staying refused.
	AllowAddresses []string `yaml:"allowAddresses"`
	// SpoolThresholdBytes is how much of a response is kept in memory
	// before it is spooled to disk.
	SpoolThresholdBytes int64 `yaml:"spoolThresholdBytes"`
	// IgnoreCookies sends no cookies and keeps none (the noCookies sheet).
	IgnoreCookies bool `yaml:"ignoreCookies"`
	// CookieFile is a Netscape cookies.txt loaded into the jar at start
	// (Heritrix's cookiesLoadFile); a relative path is taken from the
	// working directory.
	CookieFile string `yaml:"cookieFile"`
	// KeepAlive sends HTTP/1.1 and reuses connections; the default is
	// HTTP/1.0 with Connection: close, as Heritrix does.
	KeepAlive bool `yaml:"keepAlive"`
	// SendIfModifiedSince and SendIfNoneMatch make conditional requests from
	// the recently-crawled DB's Last-Modified and ETag (Heritrix FetchHTTP).
	SendIfModifiedSince bool `yaml:"sendIfModifiedSince"`
	SendIfNoneMatch     bool `yaml:"sendIfNoneMatch"`
	// Proxy sends every fetch through an HTTP (http://host:port) or SOCKS5
	// (socks5://[user:pass@]host:port) proxy; empty means direct.
	Proxy string `yaml:"proxy"`
	// SendReferer sends the via URI as Referer (Heritrix FetchHTTP
	// sendReferer, default true): never for seeds or prerequisites, nor
	// from an https page to an http URI, as Heritrix does.
	SendReferer bool `yaml:"sendReferer"`
	// AcceptCompression sends "Accept-Encoding: gzip,deflate" (Heritrix
	// FetchHTTP acceptCompression, default false). The WARC keeps the
	// content-encoded entity as served; extraction decodes it.
	AcceptCompression bool `yaml:"acceptCompression"`
	// DetectChallenges recognises bot-challenge and CAPTCHA pages
	// (pkg/challenge): such an answer is not recorded; the host backs off
	// as after a 429 and the URI is tried again (default true).
	DetectChallenges bool `yaml:"detectChallenges"`
	// ChallengeMarkers are more body markers of challenge pages, matched
	// on 403, 429 and 503 answers.
	ChallengeMarkers []string `yaml:"challengeMarkers"`
	// HTTP2 offers HTTP/2 by ALPN on https and speaks it where the server
	// agrees (default true), as Heritrix's FetchHTTP2 does; the WARC
	// records keep the exchange in HTTP/1.1 text form with WARC-Protocol
	// h2. Off, every fetch is HTTP/1.x. Plain http is always HTTP/1.x.
	HTTP2 bool `yaml:"http2"`
}

// WARC file settings.
type WARC struct {
	Prefix           string `yaml:"prefix"`
	MaxFileSizeBytes int64  `yaml:"maxFileSizeBytes"`
	CompressionLevel int    `yaml:"compressionLevel"`
	// Version is the WARC version written: WARCVersion10 or WARCVersion11.
	Version string `yaml:"version"`
}

// Default returns the built-in defaults, which follow Heritrix3's and the UK
// Web Archive's frequent crawl.
func Default() Profile {
	return Profile{
		Crawl: Crawl{
			Name:               "frequent",
			OperatorContactURL: "https://example.org/crawler-contact",
			Operator:           "Trawler operator",
			UserAgentTemplate:  "Mozilla/5.0 (compatible; trawler/@VERSION@ +@OPERATOR_CONTACT_URL@)",
		},
		Politeness: Politeness{DelayFactor: 5, MinDelayMs: 3000, MaxDelayMs: 30000, RespectCrawlDelayUpToSeconds: 300,
			MaxRetryAfterSeconds: 3600, BackOffBaseMs: 10000, BackOffMaxMs: 900000},
		Fetch: Fetch{
			ConnectTimeoutSeconds: 20, ReadTimeoutSeconds: 60, TotalTimeoutSeconds: 1200,
			MaxLengthBytes: 0, SpoolThresholdBytes: 1 << 20,
			SendIfModifiedSince: true, SendIfNoneMatch: true, SendReferer: true, DetectChallenges: true,
			HTTP2: true,
		},
		Frontier:    defaultFrontier(),
		Quotas:      defaultQuotas(),
		Robots:      Robots{Policy: RobotsObey, ValidityDurationSeconds: 86400},
		DNS:         DNS{IPValidityDurationSeconds: 21600},
		Preselector: Preselector{RecheckScope: true},
		Extract:     Extract{Javascript: true, Sitemaps: true, Streams: Streams{Variants: extract.VariantsExtremes, MaxSegments: extract.DefaultMaxSegments}},
		Render: Render{Media: RenderMedia{Play: true, YtDlp: YtDlpMedia, YtDlpTimeoutSeconds: 300, YtDlpMaxBytes: 2 << 30,
			YtDlpMaxItems: 20}},
		Scope:      defaultScope(),
		WARC:       WARC{Prefix: "TRAWLER", MaxFileSizeBytes: 1 << 30, CompressionLevel: 6, Version: WARCVersion10},
		Dedup:      defaultDedup(),
		ClamAV:     defaultClamAV(),
		Provenance: defaultProvenance(),
	}
}

// Load reads a profile file over the defaults.
func Load(path string) (Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return Profile{}, fmt.Errorf("open profile: %w", err)
	}
	defer f.Close()
	p := Default()
	if err := Decode(f, &p); err != nil {
		return Profile{}, fmt.Errorf("profile %s: %w", path, err)
	}
	return p, nil
}

// Decode reads YAML strictly over p, then validates the result. A value
// of the wrong type or an unknown key is an error naming the setting's
// dotted key, after its line ("line 2: politeness.minDelayMs: \"ten\" is
// not a whole number").
func Decode(r io.Reader, p *Profile) error {
	src, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("read profile: %w", err)
	}
	return decode(src, p, true)
}

// decode is Decode of src; withLines puts the line of each type error
// in front of its key.
func decode(src []byte, p *Profile, withLines bool) error {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil && !errors.Is(err, io.EOF) {
		return namedError(err, src, withLines)
	}
	return p.Validate()
}

// Validate checks ranges and relations between settings.
func (p Profile) Validate() error {
	var errs []error
	if strings.TrimSpace(p.Crawl.Name) == "" {
		errs = append(errs, errors.New("crawl.name: must not be empty"))
	}
	if p.Politeness.DelayFactor < 0 {
		errs = append(errs, errors.New("politeness.delayFactor: must be >= 0"))
	}
	if p.Politeness.MinDelayMs < 0 || p.Politeness.MaxDelayMs < p.Politeness.MinDelayMs {
		errs = append(errs, fmt.Errorf("politeness: need 0 <= minDelayMs (%d) <= maxDelayMs (%d)",
			p.Politeness.MinDelayMs, p.Politeness.MaxDelayMs))
	}
	if p.Politeness.MaxRetryAfterSeconds < 0 || p.Politeness.BackOffBaseMs < 0 || p.Politeness.BackOffMaxMs < p.Politeness.BackOffBaseMs {
		errs = append(errs, fmt.Errorf("politeness: need maxRetryAfterSeconds >= 0 and 0 <= backOffBaseMs (%d) <= backOffMaxMs (%d)",
			p.Politeness.BackOffBaseMs, p.Politeness.BackOffMaxMs))
	}
	if p.Fetch.ConnectTimeoutSeconds <= 0 || p.Fetch.ReadTimeoutSeconds <= 0 || p.Fetch.TotalTimeoutSeconds <= 0 {
		errs = append(errs, errors.New("fetch: timeouts must be > 0"))
	}
	if p.Fetch.MaxLengthBytes < 0 || p.Fetch.SpoolThresholdBytes <= 0 {
		errs = append(errs, errors.New("fetch: maxLengthBytes must be >= 0 and spoolThresholdBytes > 0"))
	}
	errs = append(errs, p.Frontier.validate(), p.Quotas.validate(), p.Limits.validate(),
		p.Robots.validate(), p.DNS.validate(), p.Scope.validate(), p.Sheets.validate(),
		p.ClamAV.validate(), p.Credentials.validate(), validateProxy(p.Fetch.Proxy), p.WARC.validateVersion(),
		p.Render.validate(), p.Extract.Streams.validate(), validateAllowAddresses(p.Fetch.AllowAddresses), p.Dedup.validate(),
		p.Provenance.validate())
	if p.WARC.Prefix == "" || strings.ContainsAny(p.WARC.Prefix, "/ ") {
		errs = append(errs, fmt.Errorf("warc.prefix: %q must be non-empty without spaces or slashes", p.WARC.Prefix))
	}
	if p.WARC.MaxFileSizeBytes < 1<<20 {
		errs = append(errs, errors.New("warc.maxFileSizeBytes: must be at least 1 MiB"))
	}
	if p.WARC.CompressionLevel < 1 || p.WARC.CompressionLevel > 9 {
		errs = append(errs, errors.New("warc.compressionLevel: must be 1..9 (gzip level)"))
	}
	return errors.Join(errs...)
}

// UserAgent expands the template.
func (p Profile) UserAgent(version string) string {
	return strings.NewReplacer("@VERSION@", version, "@OPERATOR_CONTACT_URL@", p.Crawl.OperatorContactURL).
		Replace(p.Crawl.UserAgentTemplate)
}

// YAML renders the profile, for `trawler config show`.
func (p Profile) YAML() string {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	_ = enc.Encode(p)
	return b.String()
}

// Set overrides one setting by its dotted key, e.g.
// Set("politeness.minDelayMs", "100"). The value is read as a YAML scalar,
// and the key must name an existing setting: an unknown key (with the
// nearest real one) or a value of the wrong type is an error naming the
// key. The result is validated.
func (p *Profile) Set(key, value string) error {
	parts := strings.Split(key, ".")
	for _, part := range parts {
		if part == "" {
			return fmt.Errorf("setting %q: empty key segment", key)
		}
	}
	// A node, not an interface, so that a scalar keeps its text: decoded
	// into any, 1.0 becomes the float 1 and is written back as "1", which
	// a string setting (warc.version) would then receive.
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(value), &node); err != nil {
		return fmt.Errorf("setting %s: value %q: %w", key, value, err)
	}
	var doc any
	if len(node.Content) > 0 {
		doc = node.Content[0]
	}
	for i := len(parts) - 1; i >= 0; i-- {
		doc = map[string]any{parts[i]: doc}
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("setting %s: %w", key, err)
	}
	next := *p
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&next); err != nil {
		// Named by the key given: the lines are those of a document
		// made from it, which the operator never saw.
		return namedError(err, b, false)
	}
	if err := next.Validate(); err != nil {
		return fmt.Errorf("setting %s=%s: %w", key, value, err)
	}
	*p = next
	return nil
}

// Shipped decodes the profile shipped under name ("demo", "frequent",
// "domain": profiles/NAME.yaml) over the defaults.
func Shipped(name string) (Profile, error) {
	b, err := profiles.FS.ReadFile(name + ".yaml")
	if err != nil {
		return Profile{}, fmt.Errorf("no shipped profile %q", name)
	}
	p := Default()
	if err := Decode(bytes.NewReader(b), &p); err != nil {
		return Profile{}, fmt.Errorf("shipped profile %s: %w", name, err)
	}
	return p, nil
}
