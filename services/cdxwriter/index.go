package cdxwriter

import (
	"fmt"
	"net/http"

	"github.com/trawler-crawl/trawler/pkg/cdxindex"
)

// openIndex is the seam between the writer and pkg/cdxindex: with no
// Deps.Index it opens the Pebble index under Config.IndexDir() for the
// duration of Run and returns its OutbackCDX handler; otherwise it uses the
// given index and Deps.API.
func (w *Writer) openIndex() (api http.Handler, closeIndex func(), err error) {
	if w.d.Index != nil {
		w.index = w.d.Index
		return w.d.API, func() {}, nil
	}
	ix, err := cdxindex.Open(w.cfg.IndexDir(), cdxindex.Options{Logger: w.log.With("part", "index"), Registerer: w.d.Registerer})
	if err != nil {
		return nil, nil, fmt.Errorf("cdxwriter: %w", err)
	}
	w.index = ix
	return ix.Handler(cdxindex.HandlerOptions{}), func() {
		if err := ix.Close(); err != nil {
			w.log.Error("close cdx index", "err", err)
		}
	}, nil
}
