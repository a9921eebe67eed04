package warcwriter

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"
)

// ErrInvalidInput is wrapped by every error about a bad Capture or DNS
// record; nothing was written and retrying cannot help.
var ErrInvalidInput = errors.New("invalid input")

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("warcwriter: writer closed")

// Capture is one fetch: its request, response (or revisit) and metadata
// records are written together to one file.
type Capture struct {
	// URL is the WARC-Target-URI.
	URL string
	// Date is the fetch time, the WARC-Date of every record of the capture.
	Date time.Time
	// IP is the server address (WARC-IP-Address); empty omits the field.
	IP string
	// Request holds the raw request bytes as sent.
	Request []byte
	// Response yields ResponseLength raw response bytes: status line, headers
	// and body as received (transfer coding intact).
	Response       io.Reader
	ResponseLength int64
	// PayloadDigest ("sha1:BASE32") is computed by the fetcher over the
	// de-chunked entity body; it becomes WARC-Payload-Digest.
	PayloadDigest string
	// BlockDigest is optional; when set, gowarc checks it against the block.
	BlockDigest string
	// Metadata, when not nil, adds a metadata record.
	Metadata *Metadata
	// Revisit, when not nil, writes an identical-payload-digest revisit
	// (block: the response header only) instead of the response.
	Revisit *Revisit
	// Protocols are written as WARC-Protocol fields, one per value in
	// order, on the request and response (or revisit) records: the HTTP
	// version ("h2", "http/1.1") then the TLS version ("tls/1.3"), as the
	// WARC-Protocol proposal (iipc/warc-specifications issue 42) has them.
	// Empty writes none.
	Protocols []string
}

// Metadata is the content of a capture's metadata record.
type Metadata struct {
	Via          string
	HopsFromSeed string
	SourceTag    string
	FetchTimeMs  int64
	Outlinks     []Outlink
}

// Outlink is one "outlink: URL HOP CONTEXT" line of a metadata record.
type Outlink struct {
	URL     string
	Hop     string
	Context string
}

// Revisit names the earlier capture whose payload a revisit record repeats.
type Revisit struct {
	RefersToURI      string
	RefersToDate     time.Time
	RefersToRecordID string // optional
	// NotModified writes profile server-not-modified (the server answered
	// a conditional request with 304) instead of identical-payload-digest.
	NotModified bool
}

// Location is where a record was written: the offset of its gzip member in
// the file and the member's compressed length.
type Location struct {
	Filename string
	Offset   int64
	Length   int64
	// RecordID is the WARC-Record-ID of the record ("<urn:uuid:...>"),
	// which a later revisit names in WARC-Refers-To.
	RecordID string
}

// ClosedFile describes a finished WARC file.
type ClosedFile struct {
	Name    string // file name, without directory
	Path    string // full path
	Size    int64
	Records int64 // records in the file, warcinfo included
	Opened  time.Time
	Closed  time.Time
}

// inputErr builds an ErrInvalidInput error naming the target and field.
func inputErr(target, field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s: %s", ErrInvalidInput, target, field, fmt.Sprintf(format, args...))
}

// validateCapture checks c before anything is buffered or written.
func validateCapture(c *Capture) error {
	if c.URL == "" {
		return inputErr("capture", "URL", "is empty")
	}
	checks := []struct {
		field string
		err   string
		bad   bool
	}{
		{"URL", "contains spaces or control characters", strings.ContainsFunc(c.URL, isSpaceOrControl)},
		{"Date", "is zero", c.Date.IsZero()},
		{"IP", fmt.Sprintf("%q is not an IP address", c.IP), c.IP != "" && !validIP(c.IP)},
		{"Request", "is empty", len(c.Request) == 0},
		{"Response", "is nil", c.Response == nil},
		{"ResponseLength", fmt.Sprintf("%d is not positive", c.ResponseLength), c.ResponseLength <= 0},
		{"PayloadDigest", fmt.Sprintf("%q is not ALGORITHM:VALUE", c.PayloadDigest), !validDigest(c.PayloadDigest)},
		{"BlockDigest", fmt.Sprintf("%q is not ALGORITHM:VALUE", c.BlockDigest), c.BlockDigest != "" && !validDigest(c.BlockDigest)},
	}
	for _, ch := range checks {
		if ch.bad {
			return inputErr(c.URL, ch.field, "%s", ch.err)
		}
	}
	for i, p := range c.Protocols {
		if p == "" || strings.ContainsFunc(p, isSpaceOrControl) || strings.Contains(p, ",") {
			return inputErr(c.URL, fmt.Sprintf("Protocols[%d]", i), "%q is not one protocol name", p)
		}
	}
	if c.Revisit != nil {
		return validateRevisit(c.URL, c.Revisit)
	}
	return nil
}

func validateRevisit(target string, r *Revisit) error {
	switch {
	case r.RefersToURI == "" || strings.ContainsFunc(r.RefersToURI, isSpaceOrControl):
		return inputErr(target, "Revisit.RefersToURI", "%q is empty or contains spaces or control characters", r.RefersToURI)
	case r.RefersToDate.IsZero():
		return inputErr(target, "Revisit.RefersToDate", "is zero")
	case strings.ContainsFunc(r.RefersToRecordID, isSpaceOrControl) || strings.ContainsAny(strings.Trim(r.RefersToRecordID, "<>"), "<>"):
		return inputErr(target, "Revisit.RefersToRecordID", "%q is not a record id", r.RefersToRecordID)
	}
	return nil
}

// validateDNS checks the arguments of WriteDNS.
func validateDNS(host string, date time.Time, ip string, answer []byte) error {
	switch {
	case host == "" || strings.ContainsFunc(host, isSpaceOrControl) || strings.Contains(host, "/"):
		return inputErr("dns:"+host, "host", "%q is empty or not a host name", host)
	case date.IsZero():
		return inputErr("dns:"+host, "date", "is zero")
	case ip != "" && !validIP(ip):
		return inputErr("dns:"+host, "ip", "%q is not an IP address", ip)
	case len(answer) == 0:
		return inputErr("dns:"+host, "answer", "is empty")
	}
	return nil
}

func validIP(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Zone() == "" // gowarc's net.ParseIP rejects zones
}

// validDigest accepts "algorithm:value" with both parts non-empty and no
// spaces; gowarc checks the value itself where it can.
func validDigest(s string) bool {
	alg, val, ok := strings.Cut(s, ":")
	return ok && alg != "" && val != "" && !strings.ContainsFunc(s, isSpaceOrControl)
}
