package profile

import (
	"errors"
	"fmt"
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
}

// Render settings: hand-off of pages to the browser renderer.
type Render struct {
	// HandOff sends matching pages to the renderer (-5002) instead of
	// fetching them in the worker.
	HandOff bool `yaml:"handOff"`
}
