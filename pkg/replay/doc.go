// Package replay answers "URL U at time T" from a CDX index and WARC files
// the way pywb's warcserver answers it, so that what Trawler archives can
// be checked to replay in the tool that will replay it (ARCHITECTURE.md:
// the archive-answering part of replay QA).
//
// The rules are pywb's (webrecorder/pywb, pywb/warcserver), each function
// naming the one it follows:
//
//  1. Lookup (handlers.py ResourceHandler, indexsource.py
//     RemoteIndexSource, cdxops.py process_cdx): the exact URL's captures,
//     sorted closest to T (ties in the index's order), at most 100. Each
//     is tried in turn until one loads; a failure moves on to the next.
//     With Options.ResolveRevisits, cdx_resolve_revisits first gives a
//     revisit line the location of an earlier non-revisit line with its
//     digest (pywb's replay does not ask for it, so it is off by default).
//  2. Loading a capture (resolvingloader.py load_headers_and_payload):
//     - case 1, the line is a revisit (warc/revisit): if its record's
//     HTTP status is 3xx it is replayed as it is, Content-Length 0; if its
//     digest is that of an empty payload (EMPTY_DIGEST) its own empty
//     block is the payload; otherwise the original is looked up by the
//     record's WARC-Refers-To-Target-URI (the same URL or another one),
//     closest to its WARC-Refers-To-Date, among non-revisit captures with
//     the same digest, and the first that loads gives the payload. No
//     Refers-To-Target-URI, or no such capture, is ErrMissingOriginal
//     (pywb's "Original for revisit record could not be loaded").
//     - case 2, not a revisit: the record is header and payload.
//     - case 3, a revisit given an original by cdx_resolve_revisits: the
//     payload is the original's record.
//  3. The response (responseloader.py WARCPathLoader.load_resource): the
//     HTTP header of the capture's record, or of the payload's record when
//     the capture's has none; a 3xx (not 304) to the URL itself is skipped
//     for the next capture (raise_on_self_redirect); a record without an
//     HTTP header replays as 200 with its Content-Type (warcio's
//     default_http_headers). The body is the payload's record after its
//     HTTP header, as stored.
//
// What pywb's front end adds on top (URL rewriting, fuzzy matching,
// redirects to the exact timestamp, access controls) is not modelled.
//
// The index is an Index: the crawl's embedded index (CDXIndex over
// pkg/cdxindex) or an OutbackCDX server over HTTP (OutbackCDX), pywb's usual
// deployment; both are asked the same OutbackCDX query. Records are opened
// by Records: Dirs finds a file name in the crawl's WARC directories.
package replay
