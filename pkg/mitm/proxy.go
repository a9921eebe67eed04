package mitm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// authorityKey carries a tunnel's CONNECT authority in the contexts of the
// requests served inside it.
type authorityKey struct{}

// maxErrorText bounds the error text put into a 502 body: the browser only
// needs a hint, the log has the rest.
const maxErrorText = 200

// serveProxy handles requests on the client-facing connections: CONNECT
// tunnels and plain proxy requests in absolute form.
func (s *Server) serveProxy(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		return
	}
	defer s.wg.Done()

	if r.Method == http.MethodConnect {
		s.serveConnect(w, r)
		return
	}
	// A proxy request names its target in absolute form; an origin-form
	// request means a client mistook us for an origin server.
	if !r.URL.IsAbs() || r.URL.Host == "" || !strings.EqualFold(r.URL.Scheme, "http") {
		http.Error(w, "mitm: not a proxy request: absolute http:// URL required", http.StatusBadRequest)
		return
	}
	host, port := splitAuthority(r.URL.Host, "80")
	s.forward(w, r, "http://"+joinAuthority(host, port, "80")+r.URL.RequestURI())
}

// serveTunneled handles requests decrypted from an intercepted tunnel.
func (s *Server) serveTunneled(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		return
	}
	defer s.wg.Done()

	authority, _ := r.Context().Value(authorityKey{}).(string)
	if authority == "" {
		// Only tunneledConn connections reach this server; this would be a
		// wiring bug, not client input.
		http.Error(w, "mitm: tunnel authority unknown", http.StatusInternalServerError)
		return
	}
	if r.Method == http.MethodConnect {
		http.Error(w, "mitm: CONNECT inside a tunnel", http.StatusMethodNotAllowed)
		return
	}
	target := r.URL.RequestURI()
	if !strings.HasPrefix(target, "/") {
		http.Error(w, "mitm: request target must be a path", http.StatusBadRequest)
		return
	}
	s.forward(w, r, "https://"+authority+target)
}

// forward turns r into a Request for the Handler and writes its answer.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, target string) {
	if isUpgrade(r.Header) {
		http.Error(w, "mitm: protocol upgrades (WebSocket) are not supported", http.StatusNotImplemented)
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	header := stripHopByHop(r.Header)
	// net/http moves Host out of the header map; the recorded request
	// should show it as the client sent it.
	if r.Host != "" {
		header.Set("Host", r.Host)
	}
	req := &Request{Method: r.Method, URL: target, Header: header, Body: body}

	s.requests.Add(1)
	resp, err := s.callHandler(r.Context(), req)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	s.writeResponse(w, r, resp)
}

// readBody reads the request body under the size cap. It answers the
// request itself (and returns false) when the body is too large or broken.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	limit := s.cfg.MaxBodyBytes
	if r.ContentLength > limit {
		http.Error(w, "mitm: request body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	if r.Body == nil || r.ContentLength == 0 {
		return nil, true
	}
	// MaxBytesReader also tells net/http to close the connection rather
	// than drain an oversize body.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		http.Error(w, "mitm: request body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	case err != nil:
		s.log.Debug("mitm: read request body", "method", r.Method, "url", r.URL.String(), "err", err)
		http.Error(w, "mitm: cannot read request body", http.StatusBadRequest)
		return nil, false
	case len(body) == 0:
		return nil, true
	}
	return body, true
}

// callHandler runs the Handler, turning a panic into an error so one bad
// request cannot take the crawler down.
func (s *Server) callHandler(ctx context.Context, req *Request) (resp *Response, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("mitm: handler panic", "method", req.Method, "url", req.URL,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			resp, err = nil, fmt.Errorf("mitm: handler panic: %v", v)
		}
	}()
	resp, err = s.cfg.Handler.Handle(ctx, req)
	if err == nil && resp == nil {
		err = errors.New("mitm: handler returned no response")
	}
	if err == nil && (resp.StatusCode < 200 || resp.StatusCode > 999) {
		closeBody(resp.Body)
		err = fmt.Errorf("mitm: handler returned invalid status %d", resp.StatusCode)
	}
	return resp, err
}

func (s *Server) writeError(w http.ResponseWriter, req *Request, err error) {
	var refused *RefusedError
	if errors.As(err, &refused) {
		reason := refused.Reason
		if reason == "" {
			reason = "refused"
		}
		// Header values cannot hold line breaks; net/http would mangle them
		// anyway, so flatten them here where the intent is clear.
		w.Header().Set("X-Trawler-Refused", strings.Join(strings.Fields(reason), " "))
		http.Error(w, reason, http.StatusForbidden)
		return
	}
	s.log.Warn("mitm: handler failed", "method", req.Method, "url", req.URL, "err", err)
	msg := err.Error()
	if len(msg) > maxErrorText {
		msg = msg[:maxErrorText] + "..."
	}
	http.Error(w, "Bad Gateway: "+msg, http.StatusBadGateway)
}

// writeResponse sends resp to the client, framing the body itself.
func (s *Server) writeResponse(w http.ResponseWriter, r *http.Request, resp *Response) {
	defer closeBody(resp.Body)

	h := w.Header()
	for k, v := range stripHopByHop(resp.Header) {
		if ck := http.CanonicalHeaderKey(k); ck != "Content-Length" {
			h[ck] = v
		}
	}
	// A nil Content-Type entry stops net/http sniffing one: the browser must
	// see exactly what the handler (and the WARC record) says.
	if _, ok := h["Content-Type"]; !ok {
		h["Content-Type"] = nil
	}
	bodyAllowed := r.Method != http.MethodHead && resp.StatusCode != http.StatusNoContent &&
		resp.StatusCode != http.StatusNotModified
	length := resp.BodyLength
	if length < 0 && resp.Body == nil {
		length = 0
	}
	switch {
	case length >= 0:
		h.Set("Content-Length", strconv.FormatInt(length, 10))
	case bodyAllowed:
		// Asking for chunking explicitly stops net/http computing a length
		// for a small body; for an HTTP/1.0 client it close-delimits.
		h.Set("Transfer-Encoding", "chunked")
	}
	w.WriteHeader(resp.StatusCode)
	if !bodyAllowed || resp.Body == nil || length == 0 {
		return
	}

	var err error
	if length >= 0 {
		var n int64
		n, err = io.CopyN(w, resp.Body, length)
		if err == io.EOF {
			err = fmt.Errorf("body ended after %d of %d bytes: %w", n, length, io.ErrUnexpectedEOF)
		}
	} else {
		_, err = io.Copy(w, resp.Body)
	}
	if err != nil {
		s.log.Warn("mitm: write response body", "method", r.Method, "url", r.URL.String(), "err", err)
		// Abort the connection: a clean end (last chunk, or a connection
		// reused after a short body) would pass a truncated body off as
		// complete.
		panic(http.ErrAbortHandler)
	}
}

func closeBody(b io.Reader) {
	if c, ok := b.(io.Closer); ok {
		_ = c.Close()
	}
}

// serveConnect intercepts a CONNECT tunnel: it answers 200, terminates TLS
// with a minted leaf and hands the decrypted stream to the inner server.
func (s *Server) serveConnect(w http.ResponseWriter, r *http.Request) {
	host, port := splitAuthority(r.Host, "443")
	if host == "" {
		http.Error(w, "mitm: CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	authority := joinAuthority(host, port, "443")
	if isUpgrade(r.Header) {
		http.Error(w, "mitm: protocol upgrades are not supported", http.StatusNotImplemented)
		return
	}
	rc := http.NewResponseController(w)
	conn, brw, err := rc.Hijack()
	if err != nil {
		s.log.Error("mitm: hijack CONNECT", "authority", authority, "err", err)
		http.Error(w, "mitm: cannot hijack connection", http.StatusInternalServerError)
		return
	}
	if err := s.startTunnel(conn, brw.Reader, host, authority); err != nil {
		s.log.Debug("mitm: tunnel", "authority", authority, "remote", conn.RemoteAddr().String(), "err", err)
		_ = conn.Close()
	}
}

func (s *Server) startTunnel(conn net.Conn, br *bufio.Reader, host, authority string) error {
	// The handshake must not hang on a silent client; Close also unblocks
	// it by closing conn.
	if err := conn.SetDeadline(time.Now().Add(s.cfg.IdleTimeout)); err != nil {
		return fmt.Errorf("set handshake deadline: %w", err)
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return fmt.Errorf("answer CONNECT: %w", err)
	}
	// Take over what net/http had buffered past the CONNECT request (a
	// client may send its ClientHello without waiting for our 200), then
	// read the socket directly rather than through net/http's reader.
	buffered, err := br.Peek(br.Buffered())
	if err != nil {
		return fmt.Errorf("take buffered tunnel bytes: %w", err)
	}
	in := io.MultiReader(bytes.NewReader(bytes.Clone(buffered)), conn)
	var first [1]byte
	if _, err := io.ReadFull(in, first[:]); err != nil {
		return fmt.Errorf("read first tunnel byte: %w", err)
	}
	// 0x16 is the TLS handshake record type. Anything else (plain HTTP, a
	// non-TLS protocol) cannot be intercepted, so the tunnel is dropped.
	if first[0] != 0x16 {
		return fmt.Errorf("tunnel does not start with a TLS handshake (first byte %#x)", first[0])
	}
	raw := &prefixConn{Conn: conn, r: io.MultiReader(bytes.NewReader(first[:]), in)}

	tlsConn := tlsServer(raw, s.cfg.CA, host)
	if err := tlsConn.HandshakeContext(s.ctx); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return fmt.Errorf("clear handshake deadline: %w", err)
	}
	s.tunnels.push(&tunneledConn{Conn: tlsConn, authority: authority})
	return nil
}

// splitAuthority splits "host[:port]" (IPv6 in brackets), using defPort
// when there is no port.
func splitAuthority(authority, defPort string) (host, port string) {
	if h, p, err := net.SplitHostPort(authority); err == nil {
		if p == "" {
			p = defPort
		}
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(authority, "["), "]"), defPort
}

// joinAuthority is the inverse of splitAuthority, dropping the default port
// so that one resource always gets one URL.
func joinAuthority(host, port, defPort string) string {
	if port == defPort {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, port)
}
