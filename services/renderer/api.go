package renderer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

// APIHandler serves UKWA's webrender API: GET /render?url=URL renders the
// page now (recorded like a hand-off, as a seed of the source given by
// ?source=, default "render-api") and answers JSON with its outlinks. The
// warc_prefix parameter of UKWA's API is accepted and echoed; captures
// go to this renderer's own files. GET /qa replays a page from the
// archive and scores it (qa.go). Every request needs the bearer token.
func (r *Renderer) APIHandler(token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/render", r.serveRender)
	mux.HandleFunc("/qa", r.serveQA)
	return admin.RequireToken(token, mux)
}

func (r *Renderer) serveRender(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	q := req.URL.Query()
	u, err := uri.Normalize(q.Get("url"))
	if err != nil || q.Get("url") == "" {
		http.Error(w, fmt.Sprintf("url %q: not an http(s) URL", q.Get("url")), http.StatusBadRequest)
		return
	}
	source := q.Get("source")
	if source == "" {
		source = "render-api"
	}
	l := messages.Launch{URL: u, Method: http.MethodGet, IsSeed: true, ParentURL: u,
		ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: source}},
		Timestamp:         time.Now().UTC().Format("2006-01-02T15:04:05.000")}
	out, err := r.renderLaunch(req.Context(), l)
	if err != nil {
		http.Error(w, "render failed: "+err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		*Outcome
		WARCPrefix string `json:"warc_prefix"`
	}{out, r.prefix})
}

// startAPI serves the API on cfg.APIAddr when set and a token is
// configured; it returns the function that stops it.
func (r *Renderer) startAPI(ctx context.Context) (func(), error) {
	if r.cfg.APIAddr == "" {
		return func() {}, nil
	}
	if r.cfg.TokenFile == "" {
		r.log.Warn("render API off: --api-addr is set but no --api-token-file")
		return func() {}, nil
	}
	token, err := admin.LoadToken(r.cfg.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("render API token: %w", err)
	}
	ln, err := net.Listen("tcp", r.cfg.APIAddr)
	if err != nil {
		return nil, fmt.Errorf("render API listen: %w", err)
	}
	srv := &http.Server{Handler: r.APIHandler(token), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.log.Error("render API", "err", err)
		}
	}()
	r.log.Info("render API listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}
