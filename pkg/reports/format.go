package reports

import (
	"math"
	"strconv"
	"strings"
)

// formatDuration is ArchiveUtils.formatMillisecondsToConventional: days,
// hours, minutes, seconds and milliseconds, zero units left out, e.g.
// "1h33m38s651ms"; "0ms" for zero.
func formatDuration(ms int64) string {
	if ms == 0 {
		return "0ms"
	}
	var b strings.Builder
	if ms < 0 {
		b.WriteByte('-')
		ms = -ms
	}
	units := [...]struct {
		size int64
		name string
	}{{86_400_000, "d"}, {3_600_000, "h"}, {60_000, "m"}, {1000, "s"}, {1, "ms"}}
	for _, u := range units {
		if ms >= u.size {
			b.WriteString(strconv.FormatInt(ms/u.size, 10) + u.name)
			ms %= u.size
		}
	}
	return b.String()
}

// formatBytes is ArchiveUtils.formatBytesForDisplay: the largest binary
// unit (B to TiB) keeping the amount at least 1, with one decimal below 10
// so two digits show; "0 B" for amounts not positive.
func formatBytes(n int64) string {
	if n <= 0 {
		return "0 B"
	}
	units := [...]string{" B", " KiB", " MiB", " GiB", " TiB"}
	v := float64(n)
	u := 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	digits := 0
	if u > 0 && v < 10 {
		digits = 1
	}
	return formatDecimal(v, digits, digits) + units[u]
}

// formatDecimal formats v as Java's NumberFormat for Locale.US does:
// grouping commas, at most maxFrac and at least minFrac fraction digits,
// half-even rounding of the exact binary value, "NaN" and "∞" for the
// special values.
func formatDecimal(v float64, maxFrac, minFrac int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', maxFrac, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	for len(frac) > minFrac && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	var b strings.Builder
	if math.Signbit(v) && strings.Trim(s, "0.") != "" {
		b.WriteByte('-')
	}
	for i := range len(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(intPart[i])
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

// fixUpName is CrawlHost.fixUpName: "dns:" and "whois:" as they are, other
// host names through Java's URLEncoder (form encoding: letters, digits and
// ".-*_" kept, space as '+', the rest %XX of the UTF-8 bytes).
func fixUpName(host string) string {
	if host == "dns:" || host == "whois:" {
		return host
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '.', c == '-', c == '*', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
	}
	return b.String()
}
