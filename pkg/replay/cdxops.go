package replay

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// isRevisit is cdxobject.py CDXObject.is_revisit: the revisit MIME type,
// or no file (a line that names no record has nothing of its own).
func isRevisit(l cdx.Line) bool { return l.Mimetype == cdx.RevisitMime || l.Filename == "" }

// resolveRevisits is cdxops.py cdx_resolve_revisits: a revisit whose
// digest an earlier non-revisit line has gets that line's location as its
// original, and its MIME type and status. "Earlier" is in time, as over
// pywb's CDXJ and ZipNum indexes, which yield a URL's lines in time order
// before they are sorted closest (process_cdx resolves, then sorts); caps
// keep their closest-first order.
func resolveRevisits(caps []capture) {
	byTime := make([]*capture, len(caps))
	for i := range caps {
		byTime[i] = &caps[i]
	}
	slices.SortStableFunc(byTime, func(a, b *capture) int { return strings.Compare(a.Timestamp, b.Timestamp) })
	originals := map[string]cdx.Line{}
	for _, c := range byTime {
		if c.Digest == "" {
			continue // no digest, no way to resolve
		}
		orig, ok := originals[c.Digest]
		revisit := isRevisit(c.Line)
		switch {
		case !ok && !revisit:
			originals[c.Digest] = c.Line
		case ok && revisit:
			o := orig
			c.orig = &o
			c.Mimetype, c.Status = orig.Mimetype, orig.Status
		}
	}
}

// sortClosest orders lines by distance in seconds from closest, keeping
// the index's order among equals, as cdxops.py cdx_sort_closest does
// (bisect_right insertion).
func sortClosest(lines []cdx.Line, closest string) {
	target := timestampSeconds(closest)
	dist := func(l cdx.Line) int64 {
		d := timestampSeconds(l.Timestamp) - target
		if d < 0 {
			d = -d
		}
		return d
	}
	slices.SortStableFunc(lines, func(a, b cdx.Line) int {
		da, db := dist(a), dist(b)
		switch {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return 0
	})
}

// applyFilters keeps the lines that pass every filter.
func applyFilters(lines []cdx.Line, filters []Filter) []cdx.Line {
	return slices.DeleteFunc(lines, func(l cdx.Line) bool {
		for _, f := range filters {
			if (fieldOf(l, f.Field) == f.Value) == f.Invert {
				return true
			}
		}
		return false
	})
}

// fieldOf is the value of a line's field by its CDX API name.
func fieldOf(l cdx.Line, field string) string {
	switch field {
	case "mime", "mimetype":
		return l.Mimetype
	case "digest":
		return l.Digest
	case "status", "statuscode":
		return l.Status
	case "url", "original":
		return l.Original
	case "filename":
		return l.Filename
	}
	return ""
}

// isSelfRedirect is responseloader.py raise_on_self_redirect: a 3xx
// other than 304 whose Location, without scheme and trailing slash, is
// the requested URL, or canonicalises to the capture's URL key.
func isSelfRedirect(reqURL string, l cdx.Line, status, location string) bool {
	if !strings.HasPrefix(status, "3") || status == "304" || location == "" {
		return false
	}
	loc := strings.ToLower(location)
	if strings.HasPrefix(loc, "/") {
		if u, err := url.Parse(l.Original); err == nil {
			loc = u.Host + loc
		}
	}
	loc = strings.TrimRight(afterScheme(loc), "/")
	req := strings.TrimRight(afterScheme(strings.ToLower(reqURL)), "/")
	if req == loc {
		return true
	}
	key, err := surt.CDXKey("http://" + loc)
	return err == nil && key == l.URLKey
}

func afterScheme(s string) string {
	if _, rest, ok := strings.Cut(s, "://"); ok {
		return rest
	}
	return s
}

// Timestamp14 checks a timestamp of 1 to 14 digits and completes a short
// one to 14 as warcio's timestamp_to_datetime reads it for pywb's closest
// sort: to the last moment of the period it names ("2014" is
// 2014-12-31 23:59:59, "201402" the 28th), out-of-range fields clamped.
func Timestamp14(ts string) (string, error) {
	if ts == "" || len(ts) > 14 || strings.Trim(ts, "0123456789") != "" {
		return "", fmt.Errorf("timestamp %q: want 1 to 14 digits", ts)
	}
	return warcioTime(ts).Format("20060102150405"), nil
}

// warcioTime is warcio's timestamp_to_datetime: pad to six digits with
// "299912", then read each field present in full, clamped to its range,
// and take the largest value for each field absent or not a number.
func warcioTime(ts string) time.Time {
	const pad6 = "299912"
	if len(ts) < len(pad6) {
		ts += pad6[len(ts):]
	}
	field := func(from, to, lo, hi int) int {
		if len(ts) < to {
			return hi
		}
		v, err := strconv.Atoi(ts[from:to])
		if err != nil {
			return hi
		}
		return min(max(v, lo), hi)
	}
	year := field(0, 4, 1900, 2999)
	month := field(4, 6, 1, 12)
	lastDay := time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
	return time.Date(year, time.Month(month), field(6, 8, 1, lastDay),
		field(8, 10, 0, 23), field(10, 12, 0, 59), field(12, 14, 0, 59), 0, time.UTC)
}

// timestampSeconds is warcio's timestamp_to_sec.
func timestampSeconds(ts string) int64 { return warcioTime(ts).Unix() }

var nonDigits = regexp.MustCompile(`[^0-9]+`)

// isoToTimestamp is warcio's iso_date_to_timestamp: the digit groups of
// an ISO 8601 date (any zone ignored, as warcio ignores it; WARC dates
// are UTC), year to second, as 14 digits.
func isoToTimestamp(iso string) (string, error) {
	parts := nonDigits.Split(strings.TrimSpace(iso), -1)
	if len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) < 3 || parts[0] == "" {
		return "", fmt.Errorf("%q is not an ISO 8601 date", iso)
	}
	var v [6]int
	for i := 0; i < 6 && i < len(parts); i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return "", fmt.Errorf("%q is not an ISO 8601 date", iso)
		}
		v[i] = n
	}
	t := time.Date(v[0], time.Month(v[1]), v[2], v[3], v[4], v[5], 0, time.UTC)
	if t.Year() != v[0] || int(t.Month()) != v[1] || t.Day() != v[2] || t.Hour() != v[3] || t.Minute() != v[4] || t.Second() != v[5] {
		return "", fmt.Errorf("%q is not a valid date", iso)
	}
	return t.Format("20060102150405"), nil
}
