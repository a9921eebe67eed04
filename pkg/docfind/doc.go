// Package docfind is the crawl side of UKWA's Document Harvester: it finds
// documents (PDFs and the office formats) captured on watched targets and
// ties each to its landing page.
//
// A capture is a document when its event is a successful fetch (2xx) with a
// WARC location and a digest, its media type is one of DocumentTypes, and
// its source tag is a watched target's (the launcher's watched export). Its
// landing page is the "Link: <…>; rel=\"up\"" header of its response when
// there is one, as GOV.UK sends it, read from the WARC record; else the
// page it was found on (the event's via).
package docfind
