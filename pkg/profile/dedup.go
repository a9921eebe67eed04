package profile

import (
	"errors"
	"fmt"
	"time"
)

// Dedup says which captures are written as revisit records
// (docs/architecture.md section 11.3). A payload the
// recently-crawled DB holds for the same URL is always a candidate; the
// digest index adds payloads first captured under other URLs.
type Dedup struct {
	// AcrossURLs looks a payload up in the digest index (pkg/dedup) when
	// the URL's own history has no capture of it, so the same image under
	// two paths, a mirror or a ?v= query string becomes an
	// identical-payload-digest revisit naming the other URL in
	// WARC-Refers-To-Target-URI (WARC 1.1 section 6.7.2). Per stream: an
	// NPLD capture never refers to a BYPM one.
	AcrossURLs bool `yaml:"acrossUrls"`
	// PeriodDays is the dedup horizon: time is cut into periods of this
	// many UTC days counted from 1970-01-01, and a capture is a revisit
	// only of an original of the same period, so the first capture of a
	// payload in each period is written in full and a period's WARCs
	// stand alone (Veidemann's per-period dedup). A 304 to a conditional
	// request is not asked for when the original is of an earlier period.
	// 0: no horizon.
	PeriodDays int `yaml:"periodDays"`
	// MinPayloadBytes: a payload smaller than this is written in full
	// every time, since its revisit record would save less than its
	// headers cost; nor is it entered in the digest index. 0: any size.
	MinPayloadBytes int64 `yaml:"minPayloadBytes"`
	// DigestIndexMaxEntries bounds the digest index of each stream: past
	// it the oldest entries are dropped (about 360 bytes each in Redis).
	DigestIndexMaxEntries int64 `yaml:"digestIndexMaxEntries"`
}

func defaultDedup() Dedup {
	return Dedup{AcrossURLs: true, DigestIndexMaxEntries: 1_000_000}
}

func (d Dedup) validate() error {
	var errs []error
	if d.PeriodDays < 0 {
		errs = append(errs, fmt.Errorf("dedup.periodDays: %d must be >= 0 (0: no horizon)", d.PeriodDays))
	}
	if d.MinPayloadBytes < 0 {
		errs = append(errs, fmt.Errorf("dedup.minPayloadBytes: %d must be >= 0", d.MinPayloadBytes))
	}
	if d.AcrossURLs && d.DigestIndexMaxEntries < 1 {
		errs = append(errs, errors.New("dedup.digestIndexMaxEntries: must be >= 1 with acrossUrls"))
	}
	return errors.Join(errs...)
}

// SamePeriod reports whether an original captured at orig may stand for a
// capture at now under the horizon.
func (d Dedup) SamePeriod(orig, now time.Time) bool {
	if d.PeriodDays <= 0 {
		return true
	}
	return d.period(orig) == d.period(now)
}

// PeriodStart is when the period holding t began; the zero time without a
// horizon.
func (d Dedup) PeriodStart(t time.Time) time.Time {
	if d.PeriodDays <= 0 {
		return time.Time{}
	}
	return time.Unix(d.period(t)*int64(d.PeriodDays)*86400, 0).UTC()
}

func (d Dedup) period(t time.Time) int64 {
	days := t.Unix() / 86400
	if t.Unix() < 0 && t.Unix()%86400 != 0 {
		days--
	}
	p := days / int64(d.PeriodDays)
	if days < 0 && days%int64(d.PeriodDays) != 0 {
		p--
	}
	return p
}

// Worthwhile reports whether a payload of size bytes may be written as a
// revisit at all.
func (d Dedup) Worthwhile(size int64) bool {
	return size > 0 && size >= d.MinPayloadBytes
}
