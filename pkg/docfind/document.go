package docfind

import (
	"mime"
	"net/url"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// documentTypes are the media types taken as documents: PDF and the office
// formats UKWA's document harvester takes (Word, Excel, PowerPoint, their
// OOXML forms, OpenDocument text, spreadsheet and presentation, RTF).
var documentTypes = map[string]bool{
	"application/pdf":    true,
	"application/x-pdf":  true,
	"application/msword": true,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": true,
	"application/vnd.ms-excel": true,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         true,
	"application/vnd.ms-powerpoint":                                             true,
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": true,
	"application/vnd.oasis.opendocument.text":                                   true,
	"application/vnd.oasis.opendocument.spreadsheet":                            true,
	"application/vnd.oasis.opendocument.presentation":                           true,
	"application/rtf": true,
	"text/rtf":        true,
}

// IsDocumentType reports whether a media type (parameters allowed) is a
// document type.
func IsDocumentType(mt string) bool {
	t, _, err := mime.ParseMediaType(mt)
	if err != nil {
		t = strings.ToLower(strings.TrimSpace(strings.SplitN(mt, ";", 2)[0]))
	}
	return documentTypes[t]
}

// Document is one document found on a watched target: what the document
// DB loader and the W3ACT upload need.
type Document struct {
	URL         string `json:"document_url"`
	TargetID    int64  `json:"target_id"`
	Source      string `json:"source"`
	LandingPage string `json:"landing_page_url"`
	// LandingFrom says where the landing page came from: "link-up" (the
	// response's Link rel="up" header) or "via".
	LandingFrom  string `json:"landing_page_from"`
	WarcFilename string `json:"filename"`
	WarcOffset   int64  `json:"offset"`
	WarcLength   int64  `json:"length"`
	Digest       string `json:"digest"`
	Size         int64  `json:"size"`
	ContentType  string `json:"content_type"`
	Timestamp    string `json:"wayback_timestamp"`
	CrawlName    string `json:"crawl_name"`
}

// Candidate returns the document an event would make, without its landing
// page, and whether the event is one: a 2xx capture (not a revisit) with a
// WARC location and digest, of a document type, on a watched target.
func (t Targets) Candidate(ev *messages.Crawled) (Document, bool) {
	w, ok := t[ev.Seed]
	if !ok || ev.StatusCode < 200 || ev.StatusCode > 299 || !ev.HasWARCLocation() || ev.Digest() == "" {
		return Document{}, false
	}
	if !IsDocumentType(ev.Mimetype) || (ev.WarcType != "" && ev.WarcType != "response") {
		return Document{}, false
	}
	ts := ""
	if at, err := ev.Time(); err == nil {
		ts = at.UTC().Format("20060102150405")
	}
	if start, ok := ev.FetchStart(); ok {
		ts = start.UTC().Format("20060102150405")
	}
	d := Document{URL: ev.URL, TargetID: w.TargetID, Source: ev.Seed, WarcFilename: *ev.WarcFilename,
		WarcOffset: *ev.WarcOffset, Digest: ev.Digest(), ContentType: ev.Mimetype, Timestamp: ts, CrawlName: ev.CrawlName}
	if ev.WarcLength != nil {
		d.WarcLength = *ev.WarcLength
	}
	if ev.ContentLength != nil {
		d.Size = *ev.ContentLength
	} else if ev.Size != nil {
		d.Size = *ev.Size
	}
	d.LandingPage, d.LandingFrom = ev.Via, "via"
	return d, true
}

// LinkUp returns the target of the first rel="up" link in Link header
// values, resolved against base; "" when there is none.
func LinkUp(base string, values []string) string {
	for _, v := range values {
		for _, link := range splitLinks(v) {
			target, params, ok := strings.Cut(link, ";")
			target = strings.TrimSpace(target)
			if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			if !hasRel(params, "up") {
				continue
			}
			ref := target[1 : len(target)-1]
			b, err := url.Parse(base)
			if err != nil {
				return ref
			}
			r, err := b.Parse(ref)
			if err != nil {
				continue
			}
			return r.String()
		}
	}
	return ""
}

// splitLinks splits a Link header value at the commas between links
// (not those inside <…> or quotes).
func splitLinks(v string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			quoted = !quoted
		case c == '<' && !quoted:
			depth++
		case c == '>' && !quoted && depth > 0:
			depth--
		case c == ',' && !quoted && depth == 0:
			out = append(out, v[start:i])
			start = i + 1
		}
	}
	return append(out, v[start:])
}

// hasRel reports whether link parameters have rel (a space-separated list,
// quoted or not) containing want.
func hasRel(params, want string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "rel") {
			continue
		}
		for r := range strings.FieldsSeq(strings.Trim(strings.TrimSpace(v), `"`)) {
			if strings.EqualFold(r, want) {
				return true
			}
		}
	}
	return false
}
