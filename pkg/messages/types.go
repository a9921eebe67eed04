// Package messages defines Trawler's wire formats: the launch message (tocrawl
// and inscope topics), the crawled event, the closed-WARC notice and the
// control message, as fixed by ARCHITECTURE.md section 4. They are JSON,
// compatible with the UK Web Archive's producers and consumers.
package messages

import "encoding/json"

// Launch is a request to crawl one URL, as written to the tocrawl topics by
// the launcher (and any other producer) and to the inscope topics by workers.
type Launch struct {
	URL               string         `json:"url"`
	Method            string         `json:"method,omitempty"`
	IsSeed            bool           `json:"isSeed"`
	ForceFetch        bool           `json:"forceFetch"`
	Hop               string         `json:"hop"`
	ParentURL         string         `json:"parentUrl"`
	ParentURLMetadata ParentMetadata `json:"parentUrlMetadata"`
	// Headers and Sheets are always encoded ({} and [] when empty), as the
	// UK Web Archive's launcher writes them.
	Headers map[string]string `json:"headers"`
	Sheets  []string          `json:"sheets"`
	// TargetSheet holds inline setting overrides, e.g.
	// {"queueAssignmentPolicy.parallelQueues": 2}.
	TargetSheet map[string]json.RawMessage `json:"targetSheet,omitempty"`
	// RecrawlInterval in seconds; nil means the profile default.
	RecrawlInterval *int64 `json:"recrawlInterval,omitempty"`
	// Timestamp as ISO-8601; no zone means UTC.
	Timestamp string `json:"timestamp,omitempty"`
}

// ParentMetadata is what a URI inherits from the URI that discovered it.
type ParentMetadata struct {
	PathFromSeed  string        `json:"pathFromSeed"`
	HeritableData HeritableData `json:"heritableData"`
}

// HeritableData is passed from parent to child URIs. Keys other than the known
// ones are kept in Extra so a message round-trips without losing fields (e.g.
// UKWA's launch_ts). Its custom MarshalJSON/UnmarshalJSON (launch.go) do the
// encoding; the tags below document the key names.
type HeritableData struct {
	Source          string                     `json:"source,omitempty"`
	Heritable       []string                   `json:"heritable,omitempty"`
	RefreshDepth    *int                       `json:"refreshDepth,omitempty"`
	LaunchTimestamp string                     `json:"launchTimestamp,omitempty"`
	Annotations     []string                   `json:"annotations,omitempty"`
	Extra           map[string]json.RawMessage `json:"-"`
}

// Crawled is the event published for every finished URI (section 4.2).
// Events written by a WARC-writing proxy use content_type, warc_type,
// wire_bytes and http_method; decoding folds content_type into Mimetype and
// keeps the proxy fields.
type Crawled struct {
	Timestamp             string         `json:"timestamp"`
	URL                   string         `json:"url"`
	StatusCode            int            `json:"status_code"`
	Size                  *int64         `json:"size"`
	ContentLength         *int64         `json:"content_length"`
	ContentDigest         *string        `json:"content_digest"`
	Mimetype              string         `json:"mimetype"`
	HopPath               string         `json:"hop_path"`
	Via                   string         `json:"via"`
	Seed                  string         `json:"seed"`
	Host                  string         `json:"host"`
	Thread                int            `json:"thread"`
	StartTimePlusDuration string         `json:"start_time_plus_duration"`
	Annotations           string         `json:"annotations"`
	WarcFilename          *string        `json:"warc_filename"`
	WarcOffset            *int64         `json:"warc_offset"`
	WarcLength            *int64         `json:"warc_length"`
	CrawlName             string         `json:"crawl_name"`
	ExtraInfo             map[string]any `json:"extra_info,omitempty"`

	// Fields written by WARC-writing proxies.
	ContentType     string `json:"content_type,omitempty"`
	WarcType        string `json:"warc_type,omitempty"`
	WireBytes       *int64 `json:"wire_bytes,omitempty"`
	HTTPMethod      string `json:"http_method,omitempty"`
	WarcContentType string `json:"warc_content_type,omitempty"`
	WarcID          string `json:"warc_id,omitempty"`
}

// WarcNotice announces a closed WARC file on the <crawl>.warcs topic, or,
// with Kind set to NoticeKindCrawlLog, a rotated crawl.log: archives keep
// crawl logs with the WARCs as provenance, so movers that ship what
// <crawl>.warcs announces ship the logs too, and those that only want
// WARCs skip notices whose Kind is not empty.
type WarcNotice struct {
	Filename  string `json:"filename"`
	Path      string `json:"path"`
	Size      int64  `json:"size"`
	Records   int64  `json:"records"`
	SHA1      string `json:"sha1,omitempty"`
	Viral     bool   `json:"viral,omitempty"`
	CrawlName string `json:"crawl_name"`
	Host      string `json:"host"`
	Opened    string `json:"opened"`
	Closed    string `json:"closed"`
	// Kind says what the file is: empty for a WARC (so notices from
	// writers that predate the field read as WARCs), NoticeKindCrawlLog
	// for a crawl log, whose Records counts its lines.
	Kind string `json:"kind,omitempty"`
}

// NoticeKindCrawlLog is the WarcNotice.Kind of a rotated crawl.log.
const NoticeKindCrawlLog = "crawl_log"

// Hop letters (ARCHITECTURE.md 4.3).
const (
	HopRedirect     = 'R'
	HopEmbed        = 'E'
	HopSpeculative  = 'X'
	HopLink         = 'L'
	HopPrerequisite = 'P'
	HopInferred     = 'I'
	HopManifest     = 'M'
	HopSubmit       = 'S'
)
