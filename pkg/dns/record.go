package dns

import (
	"net/netip"
	"strconv"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// addrRecord is one A or AAAA record of an answer, kept in the form needed
// both for the address list and for the text/dns block.
type addrRecord struct {
	name string // owner name as received, with its final dot
	ttl  uint32
	addr netip.Addr
	typ  dnsmessage.Type // TypeA or TypeAAAA
}

// fetchDateLayout is Heritrix's 14-digit timestamp (ArchiveUtils.get14DigitDate).
const fetchDateLayout = "20060102150405"

// buildRecord returns the text/dns block: the fetch start time, then one line
// per record (format in the package comment).
func buildRecord(fetched time.Time, recs []addrRecord) []byte {
	b := make([]byte, 0, 16+len(recs)*48)
	b = fetched.UTC().AppendFormat(b, fetchDateLayout)
	b = append(b, '\n')
	for _, rec := range recs {
		b = appendRecordLine(b, rec)
		b = append(b, '\n')
	}
	return b
}

// appendRecordLine appends rec as dnsjava's Record.toString writes it.
func appendRecordLine(b []byte, rec addrRecord) []byte {
	start := len(b)
	b = appendPresentationName(b, rec.name)
	// dnsjava pads the owner column to tab stops 8 and 16, counting the
	// first padding tab when it decides on the second.
	if len(b)-start < 8 {
		b = append(b, '\t')
	}
	if len(b)-start < 16 {
		b = append(b, '\t')
	}
	b = append(b, '\t')
	b = strconv.AppendUint(b, uint64(rec.ttl), 10)
	b = append(b, "\tIN\t"...)
	if rec.typ == dnsmessage.TypeAAAA {
		b = append(b, "AAAA\t"...)
		return appendJavaIPv6(b, rec.addr)
	}
	b = append(b, "A\t"...)
	return rec.addr.AppendTo(b)
}

// appendPresentationName writes a name unpacked by dnsmessage (labels joined
// by dots, which dnsmessage guarantees labels never contain) with dnsjava's
// escaping (Name.byteString).
func appendPresentationName(b []byte, name string) []byte {
	if name == "." || name == "" {
		return append(b, '.')
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '.':
			b = append(b, '.')
		case c <= 0x20 || c >= 0x7f:
			b = append(b, '\\')
			if c < 100 {
				b = append(b, '0')
			}
			if c < 10 {
				b = append(b, '0')
			}
			b = strconv.AppendUint(b, uint64(c), 10)
		case c == '"' || c == '(' || c == ')' || c == ';' || c == '\\' || c == '@' || c == '$':
			b = append(b, '\\', c)
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendJavaIPv6 writes a 16-byte address as Java's InetAddress text form,
// which is what dnsjava's AAAARecord prints: mapped IPv4 addresses become
// "::ffff:a.b.c.d" (Java turns them into Inet4Address), everything else is
// eight uncompressed hex groups.
func appendJavaIPv6(b []byte, a netip.Addr) []byte {
	if a.Is4In6() {
		b = append(b, "::ffff:"...)
		return a.Unmap().AppendTo(b)
	}
	raw := a.As16()
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b = append(b, ':')
		}
		b = strconv.AppendUint(b, uint64(raw[i])<<8|uint64(raw[i+1]), 16)
	}
	return b
}
