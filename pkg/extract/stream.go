package extract

import (
	"fmt"
	"sort"
)

// Variant choices for adaptive streams (StreamOptions.Variants): which
// renditions of an HLS master playlist or a DASH adaptation set are
// followed. A player picks one rendition by bandwidth; an archive that
// keeps the highest and the lowest replays on any connection and stores
// far less than one that keeps every rung of the ladder.
const (
	VariantsExtremes = "extremes" // the highest and the lowest bandwidth (default)
	VariantsAll      = "all"
	VariantsHighest  = "highest"
	VariantsLowest   = "lowest"
	// VariantsNone leaves manifests unread: no stream is followed.
	VariantsNone = "none"
)

// DefaultMaxSegments bounds the segments listed for one media playlist or
// one DASH representation: at 6 s a segment, over three hours of media.
const DefaultMaxSegments = 2000

// StreamOptions configure HLS and DASH extraction.
type StreamOptions struct {
	Options
	// Variants is one of the Variants* choices; "" is VariantsExtremes.
	Variants string
	// MaxSegments caps the segments taken from one media playlist or
	// representation; 0 is DefaultMaxSegments.
	MaxSegments int
}

// StreamInfo describes what a manifest held and what was taken.
type StreamInfo struct {
	// Renditions counts the variants (HLS) or representations (DASH)
	// offered; Chosen how many of them were followed.
	Renditions, Chosen int
	// Segments counts the media segments listed (init segments and keys
	// not included).
	Segments int
	// Truncated is set when MaxSegments, MaxLinks or MaxBytes cut the
	// listing short.
	Truncated bool
	// Live is set for a DASH manifest of a live stream (type="dynamic")
	// whose segments are numbered without a timeline: they cannot be
	// listed, so none are.
	Live bool
}

// ValidVariants reports whether v is a Variants choice ("" included).
func ValidVariants(v string) bool {
	switch v {
	case "", VariantsExtremes, VariantsAll, VariantsHighest, VariantsLowest, VariantsNone:
		return true
	}
	return false
}

func (o StreamOptions) withDefaults() (StreamOptions, error) {
	o.Options = o.Options.withDefaults()
	if !ValidVariants(o.Variants) {
		return o, fmt.Errorf("stream variants %q: want %s, %s, %s, %s or %s", o.Variants,
			VariantsExtremes, VariantsAll, VariantsHighest, VariantsLowest, VariantsNone)
	}
	if o.Variants == "" {
		o.Variants = VariantsExtremes
	}
	if o.MaxSegments <= 0 {
		o.MaxSegments = DefaultMaxSegments
	}
	return o, nil
}

// rendition is one choice a player could make, by its bandwidth.
type rendition struct {
	bandwidth int64
	index     int // position in the manifest: ties keep document order
}

// choose returns the indexes (into rs) of the renditions to follow.
func choose(rs []rendition, variants string) []int {
	if len(rs) == 0 || variants == VariantsNone {
		return nil
	}
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	if variants == VariantsAll {
		return order
	}
	sort.SliceStable(order, func(a, b int) bool { return rs[order[a]].bandwidth < rs[order[b]].bandwidth })
	lo, hi := order[0], order[len(order)-1]
	switch variants {
	case VariantsLowest:
		return []int{lo}
	case VariantsHighest:
		return []int{hi}
	}
	if lo == hi {
		return []int{lo}
	}
	return []int{lo, hi}
}
