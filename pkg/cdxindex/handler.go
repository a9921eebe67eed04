package cdxindex

import (
	"bufio"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/admin"
)

// HandlerOptions configures the HTTP API.
type HandlerOptions struct {
	// ReadOnly answers POST ingest and delete with 403, like an OutbackCDX
	// secondary.
	ReadOnly bool
	// ScanCap bounds the index records one query reads (OutbackCDX's -r);
	// 0 means no bound, OutbackCDX's default.
	ScanCap int64
	// MaxBodyBytes bounds a POST body; 0 means no bound.
	MaxBodyBytes int64
	// Tokens guard the writes (POST ingest, delete, checkpoint): they need
	// the operator token; the read-only token is refused (403). Reads stay
	// open, as OutbackCDX's are. With no operator token every write is
	// refused (403, naming the flag), unless OpenWrites.
	Tokens admin.Tokens
	// OpenWrites accepts writes without a token, as OutbackCDX does (an
	// index other crawlers post to); Tokens are then not asked for.
	OpenWrites bool
}

// WritesNeedToken is the 403 body of a write to an API with no operator
// token and closed writes: what to set to enable them.
const WritesNeedToken = "CDX API writes need a token: set --admin-token-file " +
	"(or --cdx-writes-open to accept writes without one, as OutbackCDX does)\n"

// Handler serves OutbackCDX's API for every collection of the index:
//
//	GET  /api/collections          JSON array of collection names
//	GET  /<collection>?url=…       CDX query (see the package comment)
//	POST /<collection>             add CDX11/CDX9/CDXJ lines (badLines=skip)
//	POST /<collection>/delete      delete lines
//	POST /api/checkpoint           tar of a consistent copy of the index
//
// The POSTs are writes, refused by default: see HandlerOptions.Tokens and
// OpenWrites. Every response carries Access-Control-Allow-Origin: *. Mount it at the
// root of its own listener: OutbackCDX clients expect collections there.
func (ix *Index) Handler(opts HandlerOptions) http.Handler {
	return &handler{ix: ix, opts: opts}
}

type handler struct {
	ix   *Index
	opts HandlerOptions
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	path := r.URL.Path
	if path == "/api/collections" && r.Method == http.MethodGet {
		h.collections(w)
		return
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	name := segs[0]
	if !strings.HasPrefix(path, "/") || name == "" || strings.ContainsAny(name, ",;?") || len(segs) > 2 {
		plain(w, http.StatusNotFound, "Not found\n")
		return
	}
	if r.Method == http.MethodPost && !h.mayWrite(w, r) {
		return
	}
	switch {
	case path == "/api/checkpoint" && r.Method == http.MethodPost:
		h.serveCheckpoint(w, r)
	case len(segs) == 1 && r.Method == http.MethodGet:
		h.query(w, r, name)
	case len(segs) == 1 && r.Method == http.MethodPost:
		h.post(w, r, name)
	case segs[len(segs)-1] == "delete" && len(segs) == 2 && r.Method == http.MethodPost:
		h.delete(w, r, name)
	default:
		plain(w, http.StatusNotFound, "Not found\n")
	}
}

// mayWrite reports whether r may write; if not, it has answered.
func (h *handler) mayWrite(w http.ResponseWriter, r *http.Request) bool {
	if h.opts.OpenWrites {
		return true
	}
	if h.opts.Tokens.Operator == nil {
		plain(w, http.StatusForbidden, WritesNeedToken)
		return false
	}
	switch h.opts.Tokens.Access(r) {
	case admin.OperatorAccess:
		return true
	case admin.ReadAccess:
		plain(w, http.StatusForbidden, "CDX API writes need the operator token (--admin-token-file), not the read-only one\n")
	default:
		admin.Unauthorized(w)
	}
	return false
}

func plain(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func (h *handler) collections(w http.ResponseWriter) {
	names := h.ix.Collections()
	bw := bufio.NewWriter(w)
	w.Header().Set("Content-Type", "application/json")
	bw.WriteByte('[')
	for i, n := range names {
		if i > 0 {
			bw.WriteByte(',')
		}
		writeJSONString(bw, n)
	}
	bw.WriteByte(']')
	_ = bw.Flush()
}

// notFound answers for a collection that was never written to, with
// OutbackCDX's message (no trailing newline).
func notFound(w http.ResponseWriter, name string) {
	plain(w, http.StatusNotFound, "Collection "+name+" does not exist")
}

func (h *handler) query(w http.ResponseWriter, r *http.Request, name string) {
	start := time.Now()
	defer func() { h.ix.metrics.queries.Observe(time.Since(start).Seconds()) }()
	if _, ok := h.ix.Count(name); !ok {
		notFound(w, name)
		return
	}
	p, err := parseParams(r.URL.RawQuery)
	if err != nil {
		plain(w, http.StatusBadRequest, err.Error()+"\n")
		return
	}
	switch {
	case len(p) == 0:
		h.details(w, name)
		return
	case len(p["q"]) > 0:
		plain(w, http.StatusNotImplemented, "The OpenWayback XML query API (q=) is not supported; use url= or urlkey=\n")
		return
	}
	q, err := parseQuery(p)
	if err == nil {
		err = q.prepare()
	}
	if err != nil {
		plain(w, http.StatusBadRequest, err.Error()+"\n")
		return
	}
	h.answer(w, r, name, q)
}

// answer runs q and streams the result.
func (h *handler) answer(w http.ResponseWriter, r *http.Request, name string, q *query) {
	if err := h.ix.acquire(); err != nil {
		plain(w, http.StatusServiceUnavailable, err.Error()+"\n")
		return
	}
	defer h.ix.closeMu.RUnlock()
	it, err := h.ix.execute(name, q, h.opts.ScanCap)
	if err != nil {
		h.ix.log.Error("cdx query failed", "collection", name, "query", r.URL.RawQuery, "err", err)
		plain(w, http.StatusInternalServerError, err.Error()+"\n")
		return
	}
	defer it.close()
	format, contentType := formatFor(q.output)
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("outbackcdx-urlkey", q.urlkey)
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 32<<10)
	format.begin(bw, q.fields)
	for n := int64(0); n < q.limit; n++ {
		c, ok := it.next()
		if !ok {
			break
		}
		format.capture(bw, q.fields, c)
	}
	if err := it.err(); err != nil {
		h.ix.log.Error("cdx query failed while streaming", "collection", name, "query", r.URL.RawQuery, "err", err)
		bw.WriteString("warning: output may be incomplete, error occurred processing captures\n")
	}
	format.end(bw)
	if err := bw.Flush(); err != nil {
		h.ix.log.Debug("cdx query: client went away", "collection", name, "err", err)
	}
}

// details is the page OutbackCDX shows for a collection URL without a query.
func (h *handler) details(w http.ResponseWriter, name string) {
	n, _ := h.ix.Count(name)
	stats := ""
	if err := h.ix.acquire(); err == nil {
		stats = h.ix.db.Metrics().String()
		h.ix.closeMu.RUnlock()
	}
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprintf(w, "<form>URL: <input name=url type=url><button type=submit>Query</button></form>\n<pre>%s\nEstimated number of records: %d",
		html.EscapeString(stats), n)
}

func (h *handler) body(w http.ResponseWriter, r *http.Request) io.Reader {
	if h.opts.MaxBodyBytes > 0 {
		return http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
	}
	return r.Body
}

func (h *handler) post(w http.ResponseWriter, r *http.Request, name string) {
	if h.opts.ReadOnly {
		plain(w, http.StatusForbidden, "This index is read-only and will not accept writes.")
		return
	}
	if err := ValidateCollection(name); err != nil {
		plain(w, http.StatusBadRequest, "Invalid collection name\n")
		return
	}
	p, err := parseParams(r.URL.RawQuery)
	if err != nil {
		plain(w, http.StatusBadRequest, err.Error()+"\n")
		return
	}
	skip := len(p["badLines"]) > 0 && p["badLines"][0] == "skip"
	res, err := h.ix.ingest(r.Context(), name, h.body(w, r), skip)
	h.finishWrite(w, r, name, res, err, "Added")
}

func (h *handler) delete(w http.ResponseWriter, r *http.Request, name string) {
	if h.opts.ReadOnly {
		plain(w, http.StatusForbidden, "This index is read-only and will not accept writes.")
		return
	}
	if _, ok := h.ix.Count(name); !ok {
		notFound(w, name)
		return
	}
	p, err := parseParams(r.URL.RawQuery)
	if err != nil {
		plain(w, http.StatusBadRequest, err.Error()+"\n")
		return
	}
	recanon := !(len(p["recanonicalize"]) > 0 && p["recanonicalize"][0] == "0")
	res, err := h.ix.remove(r.Context(), name, h.body(w, r), recanon)
	h.finishWrite(w, r, name, res, err, "Deleted")
}

// finishWrite answers an ingest or delete: OutbackCDX's "At line:" 400 for
// a bad line, its "Added N records" on success.
func (h *handler) finishWrite(w http.ResponseWriter, r *http.Request, name string, res ingestResult, err error, verb string) {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		plain(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes\n", tooBig.Limit))
	case err != nil:
		h.ix.log.Error("cdx write failed", "collection", name, "method", r.Method, "path", r.URL.Path, "err", err)
		plain(w, http.StatusInternalServerError, err.Error()+"\n")
	case res.bad != nil:
		plain(w, http.StatusBadRequest, fmt.Sprintf("At line: %s\nline %d: %v\n", res.bad.Text, res.bad.Line, res.bad.Err))
	default:
		h.ix.log.Info("cdx write", "collection", name, "op", strings.ToLower(verb), "lines", res.added)
		plain(w, http.StatusOK, verb+" "+strconv.FormatInt(res.added, 10)+" records\n")
	}
}

// parseParams splits a raw query string as OutbackCDX does: on "&" only,
// dropping empty pairs and pairs without "=", decoding "+" as a space.
func parseParams(raw string) (params, error) {
	p := params{}
	for _, pair := range strings.Split(raw, "&") {
		k, v, ok := strings.Cut(pair, "=")
		if pair == "" || !ok {
			continue
		}
		dk, err := url.QueryUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("query parameter %q: %w", k, err)
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("query parameter %s: %w", dk, err)
		}
		p[dk] = append(p[dk], dv)
	}
	return p, nil
}
