// Package dns resolves host names for the fetch chain, caches the answers for
// max(TTL, MinValidity) (Heritrix's ipValidityDurationSeconds), and produces
// the body of the `dns:` capture Heritrix writes for every lookup.
//
// Go's net.Resolver hides record TTLs, so the Resolver asks name servers
// itself (golang.org/x/net/dns/dnsmessage over UDP, retried over TCP when the
// reply is truncated), querying A and AAAA for the absolute name (host + ".",
// no search list, as Heritrix's FetchDNS does) and following CNAME chains.
//
// # The text/dns record block
//
// Answer.Record is the content of the WARC `response` record of type
// `text/dns` for `dns:host`, byte for byte what Heritrix3's FetchDNS writes
// (getDNSRecord, with dnsjava's Record.toString for each line):
//
//	<14-digit fetch start, UTC, yyyyMMddHHmmss>\n
//	<record>\n
//	<record>\n ...
//
// where each record is
//
//	NAME <pad> \t TTL \t IN \t TYPE \t RDATA
//
// NAME is the owner name in presentation form with its final dot (after any
// CNAME has been followed, so the alias itself is not listed, as dnsjava's
// Lookup returns only the records of the requested type); bytes <= 0x20 or
// >= 0x7f are written \DDD and the characters "();\@$ are backslash-escaped.
// <pad> is dnsjava's column padding: two extra tabs when NAME is shorter than
// 8 characters, one when it is shorter than 16, none otherwise. TTL is the
// record's TTL in seconds as received. RDATA is the dotted quad for A, and
// Java's Inet6Address text for AAAA: eight lower-case hex groups without
// leading zeros and without "::" compression ("2001:db8:0:0:0:0:0:1"), or
// "::ffff:" and a dotted quad for an IPv4-mapped address. For example (\t is
// a tab):
//
//	20240117090000
//	example.org.\t\t300\tIN\tA\t93.184.216.34
//	www.example.com.\t3600\tIN\tA\t93.184.216.34
//
// Heritrix asks for A records only; Trawler also asks for AAAA and lists the
// A records first, then the AAAA records, each in the order received.
package dns
