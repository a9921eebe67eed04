package fetch

import (
	"crypto/tls"
	"fmt"
	"net"
)

// Values of Response.Protocols, as the WARC-Protocol field proposal
// (iipc/warc-specifications issue 42) names them: ALPN identifiers for
// HTTP, "tls/1.x" for the TLS version.
const (
	ProtocolHTTP10 = "http/1.0"
	ProtocolHTTP11 = "http/1.1"
	ProtocolH2     = "h2"
)

// AnnotationH2 marks a fetch made over HTTP/2 in the crawl.log, as
// Heritrix's FetchHTTP2 annotates it.
const AnnotationH2 = "h2"

// alpnH2 is the ALPN identifier of HTTP/2 over TLS (RFC 9113 section 3.2).
const alpnH2 = "h2"

// protocols lists the protocols of an exchange on c, outermost HTTP
// first: http names the HTTP version spoken, followed by the TLS version
// when c is a TLS connection.
func protocols(c net.Conn, http string) []string {
	out := []string{http}
	if tc, ok := c.(*tls.Conn); ok {
		if v := tlsProtocol(tc.ConnectionState().Version); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// tlsProtocol names a TLS version as WARC-Protocol writes it; "" for 0
// (no handshake).
func tlsProtocol(v uint16) string {
	switch v {
	case 0:
		return ""
	case tls.VersionTLS10:
		return "tls/1.0"
	case tls.VersionTLS11:
		return "tls/1.1"
	case tls.VersionTLS12:
		return "tls/1.2"
	case tls.VersionTLS13:
		return "tls/1.3"
	}
	return fmt.Sprintf("tls/0x%04x", v)
}

// negotiatedH2 reports whether c agreed on HTTP/2 by ALPN.
func negotiatedH2(c net.Conn) bool {
	tc, ok := c.(*tls.Conn)
	return ok && tc.ConnectionState().NegotiatedProtocol == alpnH2
}

// h1Protocol is the HTTP version of the requests the fetcher writes on
// an HTTP/1.x connection: HTTP/1.1 with keep-alive, else HTTP/1.0.
func (f *Fetcher) h1Protocol() string {
	if f.cfg.KeepAlive {
		return ProtocolHTTP11
	}
	return ProtocolHTTP10
}
