package extract

import (
	"fmt"
	"strconv"
	"strings"
)

// templateVars are the identifiers a SegmentTemplate's media and
// initialization attributes may hold (ISO/IEC 23009-1 5.3.9.4.4).
type templateVars struct {
	id        string
	bandwidth int64
	number    int64
	time      int64
}

// expand substitutes $RepresentationID$, $Number$, $Bandwidth$, $Time$
// (the last three with an optional %0<width>d format) and $$. An unknown
// identifier or an unclosed $ is left as written: the URL then fails to
// fetch rather than naming another resource.
func (v templateVars) expand(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i+1:], '$')
		if j < 0 {
			b.WriteString(s[i:])
			return b.String()
		}
		ident := s[i+1 : i+1+j]
		s = s[i+2+j:]
		if sub, ok := v.substitute(ident); ok {
			b.WriteString(sub)
		} else {
			b.WriteString("$" + ident + "$")
		}
	}
}

func (v templateVars) substitute(ident string) (string, bool) {
	name, format, _ := strings.Cut(ident, "%")
	var n int64
	switch name {
	case "":
		return "$", format == ""
	case "RepresentationID":
		return v.id, format == ""
	case "Number":
		n = v.number
	case "Bandwidth":
		n = v.bandwidth
	case "Time":
		n = v.time
	default:
		return "", false
	}
	if format == "" {
		return strconv.FormatInt(n, 10), true
	}
	// Only %0<width>d is allowed; width bounded so a hostile manifest
	// cannot ask for a megabyte of zeros.
	if !strings.HasPrefix(format, "0") || !strings.HasSuffix(format, "d") {
		return "", false
	}
	width, err := strconv.Atoi(format[1 : len(format)-1])
	if err != nil || width < 1 || width > 32 {
		return "", false
	}
	return fmt.Sprintf("%0*d", width, n), true
}

// isoDuration parses an xs:duration as MPDs write it (PT1H2M3.5S,
// P1DT2H); years and months, which have no fixed length, are refused.
func isoDuration(s string) (float64, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "P")
	if !ok || rest == "" {
		return 0, fmt.Errorf("duration %q: want PnDTnHnMnS", s)
	}
	var total float64
	inTime := false
	for rest != "" {
		if rest[0] == 'T' {
			inTime, rest = true, rest[1:]
			continue
		}
		i := strings.IndexAny(rest, "DHMS")
		if i <= 0 {
			return 0, fmt.Errorf("duration %q: want PnDTnHnMnS", s)
		}
		f, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || f < 0 {
			return 0, fmt.Errorf("duration %q: bad number %q", s, rest[:i])
		}
		unit := map[byte]float64{'D': 86400, 'H': 3600, 'M': 60, 'S': 1}[rest[i]]
		if rest[i] == 'D' && inTime || rest[i] != 'D' && !inTime {
			return 0, fmt.Errorf("duration %q: %c in the wrong part", s, rest[i])
		}
		total += f * unit
		rest = rest[i+1:]
	}
	return total, nil
}
