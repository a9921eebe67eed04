package fetch

import (
	"bytes"
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http2/hpack"
)

// h2Request is a request as HTTP/2 sends it, with the HTTP/1.1 text form
// that the WARC request record keeps.
type h2Request struct {
	fields []hpack.HeaderField // pseudo-headers first, then the rest in order
	body   []byte
	text   []byte // HTTP/1.1 form: request line, headers, blank line, body
}

// h2ConnectionHeaders are HTTP/1.x connection-specific headers, which
// RFC 9113 section 8.2.2 forbids in HTTP/2.
var h2ConnectionHeaders = []string{"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"}

// buildH2Request renders s for HTTP/2. The headers are exactly those of
// the HTTP/1.1 request the fetcher would write (same order, same values),
// with Host carried as :authority, the connection-specific ones left out
// and the names lower-cased as HTTP/2 requires. The recorded text is the
// HTTP/1.1 form, as Heritrix's FetchHTTP2 records it: the request line
// with "HTTP/1.1", then "host" and the headers as sent.
func buildH2Request(s reqSpec, scheme string) (h2Request, error) {
	s.keepAlive = true // no "Connection: close"; the version says HTTP/1.1
	h1, err := buildRequest(s)
	if err != nil {
		return h2Request{}, err
	}
	head, _, _ := bytes.Cut(h1, []byte("\r\n\r\n"))
	lines := strings.Split(string(head), "\r\n")
	r := h2Request{body: s.body, fields: []hpack.HeaderField{
		{Name: ":method", Value: s.method},
		{Name: ":scheme", Value: scheme},
		{Name: ":authority", Value: s.hostHeader},
		{Name: ":path", Value: s.requestTarget},
	}}
	var text bytes.Buffer
	fmt.Fprintf(&text, "%s %s HTTP/1.1\r\n", s.method, s.requestTarget)
	fmt.Fprintf(&text, "host: %s\r\n", s.hostHeader)
	for _, line := range lines[1:] {
		name, value, _ := strings.Cut(line, ": ")
		name = strings.ToLower(name)
		if name == "host" || slices.Contains(h2ConnectionHeaders, name) {
			continue
		}
		r.fields = append(r.fields, hpack.HeaderField{Name: name, Value: value})
		fmt.Fprintf(&text, "%s: %s\r\n", name, value)
	}
	text.WriteString("\r\n")
	text.Write(s.body)
	r.text = text.Bytes()
	return r, nil
}

// h2Head is a decoded HTTP/2 response header block.
type h2Head struct {
	status int
	fields []hpack.HeaderField // regular fields, in the order received
}

// parseH2Head checks the pseudo-headers of a response header block: a
// response carries exactly one :status of three digits and no other
// pseudo-header (RFC 9113 section 8.3.2).
func parseH2Head(fields []hpack.HeaderField) (h2Head, error) {
	var h h2Head
	seen := false
	for _, f := range fields {
		if !f.IsPseudo() {
			h.fields = append(h.fields, f)
			continue
		}
		if f.Name != ":status" || seen {
			return h2Head{}, fmt.Errorf("unexpected pseudo-header %s in a response", f.Name)
		}
		seen = true
		n, err := strconv.Atoi(f.Value)
		if err != nil || len(f.Value) != 3 || n < 100 {
			return h2Head{}, fmt.Errorf("bad :status %q", f.Value)
		}
		h.status = n
	}
	if !seen {
		return h2Head{}, fmt.Errorf("response header block without :status")
	}
	return h, nil
}

// text renders the head in HTTP/1.1 form, as Heritrix's FetchHTTP2
// records it: "HTTP/1.1", the status and its standard reason phrase (HTTP/2
// has none), then the fields as received, names in their HTTP/2 lower case.
func (h h2Head) text() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", h.status, http.StatusText(h.status))
	for _, f := range h.fields {
		fmt.Fprintf(&b, "%s: %s\r\n", f.Name, f.Value)
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// header returns the fields as an http.Header with canonical keys, which
// is what the rest of the crawler reads.
func (h h2Head) header() http.Header {
	hdr := make(http.Header, len(h.fields))
	for _, f := range h.fields {
		k := textproto.CanonicalMIMEHeaderKey(f.Name)
		hdr[k] = append(hdr[k], f.Value)
	}
	return hdr
}
