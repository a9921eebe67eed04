package profile

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/trawler-crawl/trawler/pkg/extract"
)

// Robots policies (Heritrix robotsPolicyName values).
const (
	RobotsObey          = "obey"
	RobotsClassic       = "classic"
	RobotsTxtOnly       = "robotsTxtOnly"
	RobotsIgnore        = "ignore"
	RobotsCalculateOnly = "calculateRobotsOnly"
)

// Robots settings.
type Robots struct {
	Policy                  string `yaml:"policy"`
	ValidityDurationSeconds int64  `yaml:"validityDurationSeconds"`
}

func (r Robots) validate() error {
	switch r.Policy {
	case RobotsObey, RobotsClassic, RobotsTxtOnly, RobotsIgnore, RobotsCalculateOnly:
	default:
		return fmt.Errorf("robots.policy: %q is not one of obey, classic, robotsTxtOnly, ignore, calculateRobotsOnly", r.Policy)
	}
	if r.ValidityDurationSeconds < 0 {
		return errors.New("robots.validityDurationSeconds: must be >= 0")
	}
	return nil
}

// DNS settings.
type DNS struct {
	// IPValidityDurationSeconds is the least time a lookup is reused.
	IPValidityDurationSeconds int64 `yaml:"ipValidityDurationSeconds"`
}

func (d DNS) validate() error {
	if d.IPValidityDurationSeconds < 0 {
		return errors.New("dns.ipValidityDurationSeconds: must be >= 0")
	}
	return nil
}

// Preselector settings, applied just before a URI is fetched.
type Preselector struct {
	// BlockAll finishes every URI with -5001 (the blockAll sheet).
	BlockAll bool `yaml:"blockAll"`
	// RecheckScope re-applies scope and exclusions at fetch time.
	RecheckScope bool `yaml:"recheckScope"`
}

// Extract switches link extraction features.
type Extract struct {
	// IgnoreFormActionUrls skips form actions (the noForms sheet).
	IgnoreFormActionUrls bool `yaml:"ignoreFormActionUrls"`
	// Javascript enables speculative extraction from JavaScript.
	Javascript bool `yaml:"javascript"`
	// Sitemaps follows robots.txt Sitemap: lines and sitemap XML.
	Sitemaps bool `yaml:"sitemaps"`
	// Streams bounds what HLS playlists and DASH manifests lead to.
	Streams Streams `yaml:"streams"`
}

// Streams settings: which renditions of an adaptive stream (HLS, DASH)
// become outlinks, and how many segments each. Heritrix has no such
// extractor; UKWA captured streams with youtube-dl on the rendered page.
type Streams struct {
	// Variants is extremes (the highest and lowest bandwidth: replays on
	// any connection for a fraction of the bytes), all, highest, lowest,
	// or none (manifests are stored, not followed).
	Variants string `yaml:"variants"`
	// MaxSegments caps the segments taken from one media playlist or
	// DASH representation (0..MaxStreamSegments).
	MaxSegments int `yaml:"maxSegments"`
}

// MaxStreamSegments bounds Streams.MaxSegments: a day of 6 s segments.
const MaxStreamSegments = 14400

func (s Streams) validate() error {
	if !extract.ValidVariants(s.Variants) {
		return fmt.Errorf("extract.streams.variants: %q is not one of extremes, all, highest, lowest, none", s.Variants)
	}
	if s.MaxSegments < 0 || s.MaxSegments > MaxStreamSegments {
		return fmt.Errorf("extract.streams.maxSegments: %d not in 0..%d (0: %d)", s.MaxSegments, MaxStreamSegments, extract.DefaultMaxSegments)
	}
	return nil
}

// Render settings: hand-off of pages to the browser renderer.
type Render struct {
	// HandOff sends seeds and URIs annotated WebRenderThis to the renderer
	// (-5002) instead of fetching them in the worker, as UKWA does.
	HandOff bool `yaml:"handOff"`
	// ScrollSteps scrolls a rendered page down this many viewport heights
	// (stopping at its end) to trigger lazy loading; 0 does not scroll.
	ScrollSteps int `yaml:"scrollSteps"`
	// MaxResources caps the requests one page may make through the
	// recording proxy; later ones are refused.
	MaxResources int `yaml:"maxResources"`
	// Media is what the renderer does for a page's audio and video.
	Media RenderMedia `yaml:"media"`
}

// yt-dlp modes (RenderMedia.YtDlp).
const (
	YtDlpOff = "off"
	// YtDlpMedia runs yt-dlp on rendered pages where the browser saw
	// media: a <video> or <audio> element, or an audio, video or stream
	// manifest response.
	YtDlpMedia = "media"
	// YtDlpAlways runs it on every rendered page: what a sheet sets for
	// the pages it marks.
	YtDlpAlways = "always"
)

// RenderMedia settings: media capture in the renderer (brozzler's and
// Browsertrix's behaviours, Heritrix's ExtractorYoutubeDL).
type RenderMedia struct {
	// Play starts every <video> and <audio> element, muted and scrolled
	// into view, so media that load on play are requested.
	Play bool `yaml:"play"`
	// YtDlp is off, media or always.
	YtDlp string `yaml:"ytDlp"`
	// YtDlpTimeoutSeconds bounds one page's yt-dlp run (1..3600).
	YtDlpTimeoutSeconds int `yaml:"ytDlpTimeoutSeconds"`
	// YtDlpMaxBytes skips media files larger than this (yt-dlp
	// --max-filesize); 0: no limit.
	YtDlpMaxBytes int64 `yaml:"ytDlpMaxBytes"`
	// YtDlpMaxItems bounds the videos fetched from one page (1..1000).
	YtDlpMaxItems int `yaml:"ytDlpMaxItems"`
}

func (m RenderMedia) validate() error {
	switch {
	case m.YtDlp != YtDlpOff && m.YtDlp != YtDlpMedia && m.YtDlp != YtDlpAlways:
		return fmt.Errorf("render.media.ytDlp: %q is not off, media or always", m.YtDlp)
	case m.YtDlpTimeoutSeconds < 1 || m.YtDlpTimeoutSeconds > 3600:
		return fmt.Errorf("render.media.ytDlpTimeoutSeconds: %d not in 1..3600", m.YtDlpTimeoutSeconds)
	case m.YtDlpMaxBytes < 0:
		return fmt.Errorf("render.media.ytDlpMaxBytes: %d is negative", m.YtDlpMaxBytes)
	case m.YtDlpMaxItems < 1 || m.YtDlpMaxItems > 1000:
		return fmt.Errorf("render.media.ytDlpMaxItems: %d not in 1..1000", m.YtDlpMaxItems)
	}
	return nil
}

// Bounds of the render settings: a sheet cannot make one page scroll or
// load without end.
const (
	MaxScrollSteps  = 50
	MaxRenderLoads  = 5000
	defaultMaxLoads = 500
)

func (r Render) validate() error {
	if r.ScrollSteps < 0 || r.ScrollSteps > MaxScrollSteps {
		return fmt.Errorf("render.scrollSteps: %d not in 0..%d", r.ScrollSteps, MaxScrollSteps)
	}
	if r.MaxResources < 0 || r.MaxResources > MaxRenderLoads {
		return fmt.Errorf("render.maxResources: %d not in 0..%d (0: %d)", r.MaxResources, MaxRenderLoads, defaultMaxLoads)
	}
	return r.Media.validate()
}

// Resources is MaxResources, or its default when unset.
func (r Render) Resources() int {
	if r.MaxResources == 0 {
		return defaultMaxLoads
	}
	return r.MaxResources
}

// validateAllowAddresses checks fetch.allowAddresses are CIDR ranges.
func validateAllowAddresses(cidrs []string) error {
	_, err := AllowedPrefixes(cidrs)
	return err
}

// AllowedPrefixes parses fetch.allowAddresses.
func AllowedPrefixes(cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(cidrs))
	for i, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("fetch.allowAddresses[%d]: %w", i, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
