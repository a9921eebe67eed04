package warciojs

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
)

// warcioLine is one line of warcio.js's CDXJ index, its JSON values as
// strings (warcio.js writes status, offset and length as strings too).
type warcioLine struct {
	key, timestamp string
	fields         map[string]string
}

func parseWarcioCDXJ(line string) (warcioLine, error) {
	key, rest, ok1 := strings.Cut(line, " ")
	ts, js, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 {
		return warcioLine{}, fmt.Errorf("not urlkey timestamp {json}: %q", line)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(js), &raw); err != nil {
		return warcioLine{}, fmt.Errorf("%q: %w", line, err)
	}
	l := warcioLine{key: key, timestamp: ts, fields: map[string]string{}}
	for k, v := range raw {
		l.fields[k] = fmt.Sprint(v)
	}
	return l, nil
}

// compareCDX indexes every file of rep with pkg/warcindex and compares
// it with warcio.js's CDXJ line by line, matched by file and offset, field
// by field. Where the two indexers follow different conventions, the field
// is normalised with the reason (norm* below); any other difference fails
// the test with the file, the offset and both values. Each record is
// compared with IndexFile's line for it; what `trawler cdx index` prints
// for the whole set (IndexFiles) differs from those only in the line of a
// server-not-modified revisit, which compareNotModified checks. It returns
// the number of lines compared.
func compareCDX(t *testing.T, rep *report) int {
	t.Helper()
	bad := newFailures(t, "cdx: warcio.js vs trawler cdx index")
	defer bad.done()
	recs := map[location]*record{}      // warcio.js's own reading of each record
	theirs := map[location]warcioLine{} // warcio.js's index
	var perRecord []cdx.Line            // IndexFile's lines, in file order
	var paths []string
	compared := 0
	for _, f := range rep.Files {
		name := filepath.Base(f.Path)
		paths = append(paths, f.Path)
		for _, r := range f.Records {
			recs[location{name, r.Offset}] = r
		}
		for _, s := range f.CDXJ {
			l, err := parseWarcioCDXJ(s)
			if err != nil {
				bad.add("%s: %v", name, err)
				continue
			}
			off, err := strconv.ParseInt(l.fields["offset"], 10, 64)
			if err != nil {
				bad.add("%s: warcio.js line without offset: %q", name, s)
				continue
			}
			theirs[location{name, off}] = l
		}
		ours := map[int64]cdx.Line{}
		_, err := warcindex.IndexFile(context.Background(), f.Path, func(l cdx.Line) error {
			ours[l.Offset] = l
			perRecord = append(perRecord, l)
			return nil
		}, func(e *warcindex.RecordError) { bad.add("trawler cdx index: %v", e) })
		if err != nil {
			bad.add("trawler cdx index %s: %v", name, err)
			continue
		}
		for at, l := range theirs {
			if _, ok := ours[at.offset]; !ok && at.file == name {
				bad.add("%s offset %d: warcio.js indexes %s %s, trawler cdx index has no line", name, at.offset, l.fields["url"], l.timestamp)
			}
		}
		for off, o := range ours {
			w, ok := theirs[location{name, off}]
			if !ok {
				bad.add("%s offset %d: trawler cdx index has %s %s, warcio.js has no line", name, off, o.Original, o.Timestamp)
				continue
			}
			compared++
			rec := recs[location{name, off}]
			if rec == nil {
				bad.add("%s offset %d: warcio.js indexed a record its parser did not report", name, off)
				continue
			}
			for _, d := range diffLine(o, w, rec) {
				bad.add("%s offset %d (%s): %s", name, off, o.Original, d)
			}
		}
	}
	compareNotModified(bad, paths, perRecord, recs, theirs)
	return compared
}

// location is a record's place: its file's base name and offset.
type location struct {
	file   string
	offset int64
}

// compareNotModified checks the one way `trawler cdx index` departs from
// indexing each record by itself, which warcio.js does: a
// server-not-modified revisit whose original response is among the files
// gets a line pointing at that original (ARCHITECTURE.md section 11,
// "Replay of 304 captures"). The original is found here from warcio.js's
// reading of the records (WARC-Refers-To, else target URI, 14-digit date
// and payload digest), and the line must be warcio.js's line of the
// revisit for urlkey, timestamp and URL and warcio.js's line of the
// original for the rest, with the normalisations of diffLine. Every other
// line, and the line of a 304 whose original warcio.js cannot find either,
// is the one IndexFile gives.
func compareNotModified(bad *failures, paths []string, perRecord []cdx.Line, recs map[location]*record, theirs map[location]warcioLine) {
	byID := map[string]*record{}
	byRef := map[string]*record{}
	where := map[*record]location{}
	for at, r := range recs {
		if r.Type != "response" || r.HTTPStatus == 304 {
			continue
		}
		where[r] = at
		byID[r.ID] = r
		byRef[r.URI+" "+timestamp14(r.Date)+" "+strings.ToLower(r.PayloadDigest)] = r
	}
	original := func(rev *record) *record {
		if rev.RefersTo != "" {
			return byID[rev.RefersTo]
		}
		return byRef[rev.RefersToURI+" "+timestamp14(rev.RefersToDate)+" "+strings.ToLower(rev.PayloadDigest)]
	}
	var set []cdx.Line
	if _, err := warcindex.IndexFiles(context.Background(), paths, func(l cdx.Line) error {
		set = append(set, l)
		return nil
	}, warcindex.FilesOptions{}); err != nil {
		bad.add("trawler cdx index of all %d files: %v", len(paths), err)
		return
	}
	if len(set) != len(perRecord) {
		bad.add("trawler cdx index of all files gives %d lines, of each file %d", len(set), len(perRecord))
		return
	}
	resolved := 0
	for i, own := range perRecord {
		at := location{own.Filename, own.Offset}
		rev := recs[at]
		var orig *record
		if rev != nil && rev.Type == "revisit" && strings.HasSuffix(rev.Profile, "/revisit/server-not-modified") {
			orig = original(rev)
		}
		if orig == nil {
			if set[i] != own {
				bad.add("%s offset %d (%s): the line in the set differs from the file's own:\n set %s\n own %s",
					at.file, at.offset, own.Original, set[i].CDX11(), own.CDX11())
			}
			continue
		}
		resolved++
		w, ok := theirs[where[orig]]
		if !ok {
			bad.add("%s: warcio.js has no line for %s, the original of %s", rev, orig, own.Original)
			continue
		}
		// warcio.js's line of the original, under the revisit's key, time and URL.
		rw := theirs[at]
		w.key, w.timestamp = rw.key, rw.timestamp
		w.fields = maps.Clone(w.fields)
		w.fields["url"] = rw.fields["url"]
		for _, d := range diffLine(set[i], w, orig) {
			bad.add("%s (a 304 pointing at %s): %s", rev, orig, d)
		}
	}
	bad.t.Logf("trawler cdx index of the %d files points %d 304s at their originals", len(paths), resolved)
	if resolved == 0 && len(perRecord) > 0 {
		for _, r := range recs {
			if r.Type == "revisit" && strings.HasSuffix(r.Profile, "/revisit/server-not-modified") && original(r) != nil {
				bad.add("no 304 line pointed at its original, though %s has one", r)
				return
			}
		}
	}
}

// diffLine lists the fields in which two index lines of one record differ
// after normalisation.
func diffLine(o cdx.Line, w warcioLine, rec *record) []string {
	var diffs []string
	field := func(name, ours, theirs string) {
		if ours != theirs {
			diffs = append(diffs, fmt.Sprintf("%s: trawler %q, warcio.js %q", name, ours, theirs))
		}
	}
	field("urlkey", o.URLKey, normKey(w.key, o.URLKey, w.fields["url"]))
	field("timestamp", o.Timestamp, w.timestamp)
	field("url", o.Original, w.fields["url"])
	field("mime", o.Mimetype, normMime(w.fields["mime"], rec))
	field("status", o.Status, normStatus(w.fields["status"], rec))
	field("digest", o.Digest, normDigest(w.fields["digest"], o.Digest, rec))
	field("redirect", o.Redirect, normRedirect(w.fields["http:location"], o.Status, o.Original))
	field("length", strconv.FormatInt(o.Length, 10), w.fields["length"])
	field("offset", strconv.FormatInt(o.Offset, 10), w.fields["offset"])
	field("filename", o.Filename, w.fields["filename"])
	return diffs
}

// normKey: Trawler's key is the Internet Archive's canonical SURT (the
// Python surt package, which pywb and OutbackCDX use), which drops a
// path's trailing slash ("/sec1/" -> "/sec1"); warcio.js's getSurt is a
// lighter canonicalisation that keeps the path as given. warcio.js's key
// with the trailing slash of its path removed is taken when that is what
// Trawler wrote. For a URI of another hierarchical scheme (the metadata
// WARCs' NetarchiveSuite-style metadata://host/path) warcio.js makes no
// SURT at all and keys the record by the URI as written; Trawler keys it
// as the surt package does any scheme with an authority (scheme dropped,
// host reversed), so such a record is compared by Trawler's key when
// warcio.js's is just the URI. Any other difference remains.
func normKey(theirs, ours, uri string) string {
	if scheme, _, ok := strings.Cut(uri, "://"); ok && theirs == uri && scheme != "http" && scheme != "https" {
		return ours
	}
	path, query, hasQuery := strings.Cut(theirs, "?")
	if p, ok := strings.CutSuffix(path, "/"); ok && !strings.HasSuffix(p, ")") {
		alt := p
		if hasQuery {
			alt += "?" + query
		}
		if alt == ours {
			return alt
		}
	}
	return theirs
}

// normMime: for a response that is not HTTP (dns: lookups, Content-Type
// text/dns) warcio.js still takes the MIME type from an HTTP header it
// tries to parse out of the block, finds none and leaves it out, while
// Trawler gives the record's own Content-Type, as Heritrix's and
// OutbackCDX's indexers do ("text/dns"). Trawler's convention is the
// useful one; warcio.js's empty value is replaced by the record's type.
func normMime(theirs string, rec *record) string {
	if theirs == "" && rec.Type == "response" && !rec.isHTTP() {
		m, _, _ := strings.Cut(rec.ContentType, ";")
		return strings.ToLower(strings.TrimSpace(m))
	}
	return theirs
}

// normStatus: for a response that is not HTTP (a dns: lookup), warcio.js
// parses the block as an HTTP header anyway and writes the status it could
// not find as ""; Trawler writes 200, as pywb does (it makes up a "200 OK"
// header for such a record) and jwarc's CDX11. warcio.js's empty value is
// replaced by 200 only there. (A resource's status is empty in both.)
func normStatus(theirs string, rec *record) string {
	if theirs == "" && rec.Type == "response" && !rec.isHTTP() {
		return "200"
	}
	return theirs
}

// normDigest: warcio.js's digest is the WARC-Payload-Digest only, so a
// record without one (a dns: lookup: its block has no payload distinct
// from it) gets none. Trawler gives such a non-HTTP, non-revisit record its
// WARC-Block-Digest instead, which is the payload digest when the block is
// the payload (as WARC 1.1 defines the payload) and what the crawled event carries.
// warcio.js's empty value is replaced by the block digest (which it has
// verified) only in that case.
func normDigest(theirs, ours string, rec *record) string {
	if theirs == "" && rec.PayloadDigest == "" && rec.Type != "revisit" && !rec.isHTTP() {
		if _, v, ok := strings.Cut(rec.BlockDigest, ":"); ok && v == ours {
			return v
		}
	}
	return theirs
}

// normRedirect: warcio.js's CDXIndexer has no redirect field; validate.mjs
// asks it for the HTTP Location header instead ("http:location"), which it
// gives as sent and whatever the status. Trawler's redirect is the
// Location of a 3xx response only (CDX11's "r" field), resolved against
// the record's URL, as the crawler follows it and a replay tool looks it
// up. So Location is compared for 3xx lines only, resolved here with
// net/url (RFC 3986), independently of Trawler's pkg/uri.
func normRedirect(location, status, base string) string {
	if !strings.HasPrefix(status, "3") {
		return ""
	}
	b, err1 := url.Parse(base)
	l, err2 := url.Parse(location)
	if location == "" || err1 != nil || err2 != nil {
		return location
	}
	return b.ResolveReference(l).String()
}
