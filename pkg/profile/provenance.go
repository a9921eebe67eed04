package profile

import "fmt"

// Provenance holds the crawl-wide settings of the provenance role
// (docs/provenance.md).
type Provenance struct {
	// KeepSealedDays is how long a launch's harvest statistics stay in
	// Redis once its metadata WARC, which keeps them for good
	// (harvest-statistics.json, and the report files under
	// <data>/provenance), is written: the admin API and `trawler
	// provenance stats` answer for it meanwhile. 0: kept for ever, and
	// Redis grows with every launch.
	KeepSealedDays int `yaml:"keepSealedDays"`
	// Streaming builds the crawl's harvest statistics and metadata WARCs
	// in memory and Redis bounded independently of a launch's size: the
	// crawl is one launch at a time, over all its targets, counted by
	// topic offsets, its events spooled to disk and its CDX, reports and
	// crawl.log built from the spool and the logs by external sort
	// (docs/provenance.md, Streaming). For the domain crawl; off, each
	// target's launch is counted per URL and built in memory (the
	// frequent crawl).
	Streaming bool `yaml:"streaming,omitempty"`
}

// DefaultKeepSealedDays: a month of a frequent crawl's launches (about a
// kilobyte each) stays queryable.
const DefaultKeepSealedDays = 30

func defaultProvenance() Provenance {
	return Provenance{KeepSealedDays: DefaultKeepSealedDays}
}

func (p Provenance) validate() error {
	if p.KeepSealedDays < 0 {
		return fmt.Errorf("provenance.keepSealedDays: %d must be >= 0 (0: kept for ever)", p.KeepSealedDays)
	}
	return nil
}
