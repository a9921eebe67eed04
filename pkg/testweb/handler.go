package testweb

import (
	"bytes"
	"html"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Content types served by the site hosts.
const (
	ctHTML  = "text/html; charset=utf-8"
	ctCSS   = "text/css; charset=utf-8"
	ctJS    = "text/javascript; charset=utf-8"
	ctText  = "text/plain; charset=utf-8"
	ctXML   = "application/xml; charset=utf-8"
	ctGzip  = "application/gzip"
	ctPNG   = "image/png"
	ctFont  = "font/woff2"
	ctBytes = "application/octet-stream"
)

// notFoundBody is the body of every 404. It has no links.
const notFoundBody = "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n<body><h1>Not Found</h1><p>Nothing is served here.</p></body></html>\n"

// siteHandler serves site host h.
func (srv *Server) siteHandler(h int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if srv.site.cfg.Scripted && strings.HasPrefix(r.URL.Path, ScriptedPrefix) {
			srv.serveScripted(w, r)
			return
		}
		srv.serveResource(w, r, srv.site.route(h, r.URL.Path))
	}
}

// serveResource writes the response for res at the current epoch.
func (srv *Server) serveResource(w http.ResponseWriter, r *http.Request, res resource) {
	s, epoch := srv.site, srv.Epoch()
	switch res.kind {
	case kindNotFound:
		writeBody(w, r, http.StatusNotFound, ctHTML, []byte(notFoundBody), false)
		return
	case kindRedirect:
		srv.serveRedirect(w, r, res)
		return
	}
	hdr := w.Header()
	etag := s.etag(res, epoch)
	hdr.Set("ETag", etag)
	lm := s.lastModified(res, epoch)
	hdr.Set("Last-Modified", lm.Format(http.TimeFormat))
	if notModified(r, etag, lm) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if res.kind == kindLarge {
		srv.serveLarge(w, r, res.host)
		return
	}
	b := srv.bodyBuffer()
	defer srv.releaseBody(b)
	ct, err := srv.render(b, res, epoch)
	if err != nil {
		srv.log.Error("testweb render", "path", res.path, "err", err)
		http.Error(w, "render failed", http.StatusInternalServerError)
		return
	}
	chunked := res.isHTML() && s.hashOf(uint64(res.host), pathKey(res.path), saltChunked)%3 == 0
	writeBody(w, r, http.StatusOK, ct, b.Bytes(), chunked)
}

// maxPooledBody bounds the buffers kept for reuse, so one huge sitemap
// does not pin its memory for the life of the server.
const maxPooledBody = 1 << 20

// bodyBuffer returns an empty buffer for rendering a response body. Bodies
// are rendered whole before they are sent; reusing the buffers spares
// growing a fresh one to page size on every request.
func (srv *Server) bodyBuffer() *bytes.Buffer {
	if b, ok := srv.bodies.Get().(*bytes.Buffer); ok {
		return b
	}
	return new(bytes.Buffer)
}

// releaseBody returns b to the pool once its bytes have been written:
// ResponseWriter.Write does not retain them.
func (srv *Server) releaseBody(b *bytes.Buffer) {
	if b.Cap() > maxPooledBody {
		return
	}
	b.Reset()
	srv.bodies.Put(b)
}

// render writes the body of res into b and returns its content type.
func (srv *Server) render(b *bytes.Buffer, res resource, epoch int) (string, error) {
	s, auth := srv.site, srv.authority
	switch res.kind {
	case kindCSS:
		renderCSS(b, res.host, res.idx, auth)
		return ctCSS, nil
	case kindJS:
		b.WriteString(appJS)
		return ctJS, nil
	case kindImage:
		return ctPNG, s.renderPNG(b, res.host, res.path)
	case kindFont:
		s.renderFont(b, res.host)
		return ctFont, nil
	case kindRobots:
		s.renderRobots(b, res.host, auth)
		return ctText, nil
	case kindSitemap:
		if res.idx == 3 {
			return ctGzip, s.renderSitemap(b, res.host, res.idx, epoch, auth)
		}
		return ctXML, s.renderSitemap(b, res.host, res.idx, epoch, auth)
	default:
		d := s.doc(res)
		s.renderHTML(b, &d, epoch, auth)
		return ctHTML, nil
	}
}

// notModified evaluates If-None-Match, then If-Modified-Since.
func notModified(r *http.Request, etag string, lm time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == etag || t == "*" {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !lm.After(t) {
			return true
		}
	}
	return false
}

// writeBody sends a complete body: with Content-Length, or chunked (the
// first half is flushed before the rest exists, so the length is unknown
// when the headers go out). HTTP/1.0 clients get the chunked variant
// delimited by connection close instead.
func writeBody(w http.ResponseWriter, r *http.Request, status int, ct string, body []byte, chunked bool) {
	w.Header().Set("Content-Type", ct)
	if !chunked {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	if !chunked {
		_, _ = w.Write(body)
		return
	}
	half := len(body) / 2
	if _, err := w.Write(body[:half]); err != nil {
		return
	}
	_ = http.NewResponseController(w).Flush()
	_, _ = w.Write(body[half:])
}

// serveRedirect writes a redirect: Location as the spec writes it (some
// relative, some absolute) and a small HTML body linking the same place.
func (srv *Server) serveRedirect(w http.ResponseWriter, r *http.Request, res resource) {
	spec, _ := srv.site.redirect(res.host, res.path)
	loc := spec.to.write(res.host, dirOf(res.path), srv.authority)
	w.Header().Set("Location", loc)
	body := "<!DOCTYPE html>\n<html><head><title>Moved</title></head>\n<body><p>Moved to <a href=\"" +
		html.EscapeString(loc) + "\">here</a>.</p></body></html>\n"
	writeBody(w, r, spec.status, ctHTML, []byte(body), false)
}

// largeChunk is the write size for generated streams.
const largeChunk = 32 << 10

// serveLarge streams /files/large.bin: LargeFileBytes of ChaCha8 output
// seeded from the site seed and host. Even-numbered hosts (0, 2, ...) send
// a Content-Length; odd ones stream it chunked.
func (srv *Server) serveLarge(w http.ResponseWriter, r *http.Request, h int) {
	s := srv.site
	n := s.cfg.LargeFileBytes
	w.Header().Set("Content-Type", ctBytes)
	chunked := h%2 == 1
	if !chunked {
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	var seed [32]byte
	for i := range 4 {
		v := s.hashOf(uint64(h), saltLarge, uint64(i))
		for j := range 8 {
			seed[i*8+j] = byte(v >> (8 * j))
		}
	}
	rng := rand.NewChaCha8(seed)
	buf := make([]byte, largeChunk)
	for n > 0 {
		k := min(n, int64(len(buf)))
		_, _ = rng.Read(buf[:k])
		if _, err := w.Write(buf[:k]); err != nil {
			return
		}
		n -= k
		select {
		case <-srv.done:
			return
		default:
		}
	}
}
