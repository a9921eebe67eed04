package mitm

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
)

// tlsServer wraps raw in a TLS server whose leaf certificate is minted for
// the SNI name, or for connectHost when the client sends none (an IP
// CONNECT, where SNI is not allowed).
func tlsServer(raw net.Conn, ca *CA, connectHost string) *tls.Conn {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// HTTP/1.1 only: the inner server speaks nothing else, and a
		// browser that negotiated h2 would send a preface it cannot parse.
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			name := hello.ServerName
			if name == "" {
				name = connectHost
			}
			cert, err := ca.leafFor(name)
			if err != nil {
				return nil, fmt.Errorf("mitm: certificate for %q: %w", name, err)
			}
			return cert, nil
		},
	}
	return tls.Server(raw, cfg)
}

// prefixConn reads through r, which holds bytes already buffered from the
// connection (by net/http before the hijack, or peeked by us), then the
// connection itself.
type prefixConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// tunneledConn is a decrypted tunnel stream. It deliberately hides the
// *tls.Conn type so the inner http.Server treats it as plain HTTP/1.1 and
// does not redo the handshake or look at ALPN; authority is the CONNECT
// target, which becomes the URL authority of every request inside.
type tunneledConn struct {
	net.Conn
	authority string
}
