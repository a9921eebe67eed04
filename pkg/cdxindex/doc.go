// Package cdxindex is Trawler's embedded CDX index: captures stored in Pebble
// and served with OutbackCDX's HTTP API (ARCHITECTURE.md section 11), so that
// pywb, OpenWayback and other OutbackCDX clients can query it unchanged.
//
// # Storage
//
// One Pebble database holds every collection. A capture's key is
//
//	0x01 collection 0x00 urlkey 0x00 timestamp(8, big-endian) filename 0x00 offset(8, big-endian)
//
// which is OutbackCDX's version 4 key with the collection in front: the same
// capture (URL key, timestamp, WARC file and offset) written twice is one
// entry, so replaying a Kafka topic into the index is harmless, and captures
// sort by URL key then time, which is what exact, prefix and range queries
// scan. The value holds the remaining fields (original URL, status, MIME type,
// length, digest as raw bytes, redirect, robot flags). A per-collection
// record under the 0x00 prefix holds the exact number of entries, updated in
// the same batch as the entries themselves.
//
// # Durability
//
// Each Put or Delete is one Pebble batch committed with pebble.Sync: when it
// returns the lines are in the fsynced write-ahead log, so a caller may
// commit its Kafka offsets. Writers are serialised (to keep the count
// exact), so each Put costs one fsync; for a batch of about a thousand lines
// that is far less than the lines themselves cost.
//
// # Compatibility with OutbackCDX
//
// The query parameters, defaults (no limit), output formats (cdx, json with a
// header row, jsondict, cdxj), content types, response headers and messages
// follow OutbackCDX's WbCdxApi, Query, Capture and Webapp classes, so a query
// returns the same bytes as OutbackCDX for the same records, including its
// quirks: a CDX11 status of "-" is stored as 0, a missing length is "-" in
// cdx output and null in json, the digest is stored as base32-decoded bytes
// and re-encoded on output ("-" comes back as an empty string), and POST and
// Load recompute the URL key from the original URL (Put takes
// cdx.Line.URLKey, which is surt.CDXKey of the URL by contract). URL keys come
// from surt.CDXKey (the IA/pywb canonicaliser), where OutbackCDX uses its own
// canonicaliser; the two agree on ordinary URLs and differ in corner cases.
//
// Deliberate differences, each where OutbackCDX fails or is plainly wrong,
// or where a feature is out of scope:
//
//   - A bad parameter (matchType, sort, filter, fl, limit, from, to,
//     closest, a repeated single-valued key) is a 400 with the reason;
//     OutbackCDX answers 500 with a Java exception, or for an unknown fl
//     field writes "warning: output may be incomplete" after partial output.
//   - sort=reverse includes a capture at exactly to=; OutbackCDX's reverse
//     scan starts just before it (its forward scan includes it).
//   - A closest= shorter than 14 digits means the first moment it names
//     ("2007" is 2007-01-01T00:00:00); OutbackCDX pads with zeros, then
//     fails on month 00 or orders by the wrong key.
//   - Captures of one URL at one time in different records are kept apart
//     (OutbackCDX index versions 4 and 5; its default version 3 keeps the
//     last one written).
//   - A rejected POST says "At line: <line>" and then the reason, where
//     OutbackCDX prints a Java stack trace.
//   - POST /<collection>/delete on a missing collection is a 404.
//   - Not supported: @alias lines (a bad line), access points and access
//     rules, the OpenWayback XML API (q=, answered 501), POST request keys
//     (method=, requestBody=), fuzzy canonicalisation rules, CDXJ fields
//     beyond the CDX14 ones (dropped on ingest), and the /stats, /cube,
//     /captures, /aliases, /changes and replication endpoints.
package cdxindex
