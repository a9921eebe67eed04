package console

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/harveststats"
)

// launchesData is the launches and reports page.
type launchesData struct {
	Launches []api.LaunchState
	Reports  []string
	Metadata []string
	Errors   []string
}

func (c *Console) launches(w http.ResponseWriter, r *http.Request, s *session) {
	var d launchesData
	if hs := c.d.API.HarvestStats; hs == nil {
		d.Errors = append(d.Errors, "harvest statistics are not available on this role")
	} else if ls, err := hs.Launches(r.Context()); err != nil {
		d.Errors = append(d.Errors, "harvest statistics: "+err.Error())
	} else {
		for l, st := range ls {
			d.Launches = append(d.Launches, api.LaunchState{Launch: l, State: st})
		}
		// Newest first: the launch an operator looks for is the last.
		slices.SortFunc(d.Launches, func(a, b api.LaunchState) int {
			return strings.Compare(b.Timestamp+" "+b.Source, a.Timestamp+" "+a.Source)
		})
	}
	var err error
	if d.Reports, err = fileNames(c.d.Files.ReportsDir, "*"); err != nil {
		d.Errors = append(d.Errors, "reports: "+err.Error())
	}
	if d.Metadata, err = fileNames(c.d.Files.MetadataDir, "*.warc*"); err != nil {
		d.Errors = append(d.Errors, "metadata WARCs: "+err.Error())
	}
	c.show(w, r, s, "launches", "launches", "Launches and reports", d)
}

// launchData is one launch's statistics.
type launchData struct {
	Stats    harveststats.LaunchStats
	Metadata []string
	Error    string
}

func (c *Console) launch(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	l := harveststats.Launch{Source: strings.TrimSpace(q.Get("source")), Timestamp: strings.TrimSpace(q.Get("launch"))}
	if l.Source == "" {
		c.fail(w, r, s, http.StatusBadRequest, "launch: want ?source=<source tag>&launch=<14-digit timestamp>")
		return
	}
	if c.d.API.HarvestStats == nil {
		c.fail(w, r, s, http.StatusServiceUnavailable, "harvest statistics are not available on this role")
		return
	}
	st, err := c.d.API.HarvestStats.Stats(r.Context(), l)
	switch {
	case errors.Is(err, harveststats.ErrUnknownLaunch):
		c.fail(w, r, s, http.StatusNotFound, err.Error())
		return
	case err != nil:
		c.fail(w, r, s, http.StatusServiceUnavailable, "harvest statistics: "+err.Error())
		return
	}
	d := launchData{Stats: st}
	if l.Timestamp != "" {
		// The metadata WARC's name holds the launch time (pkg/metawarc).
		d.Metadata, _ = fileNames(c.d.Files.MetadataDir, "*-"+l.Timestamp+"*.warc*")
	}
	c.show(w, r, s, "launch", "launches", "Launch "+l.Source, d)
}

// fileNames lists the regular files in dir matching pattern, sorted; none
// when dir is "" or does not exist yet.
func fileNames(dir, pattern string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range m {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, filepath.Base(p))
		}
	}
	slices.Sort(out)
	return out, nil
}

// report serves one report file as plain text (nosniff is set), only a
// plain name in ReportsDir.
func (c *Console) report(w http.ResponseWriter, r *http.Request, s *session) {
	name := r.PathValue("name")
	if c.d.Files.ReportsDir == "" || name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		c.fail(w, r, s, http.StatusNotFound, "no report "+quoteOrEmpty(name))
		return
	}
	f, err := os.Open(filepath.Join(c.d.Files.ReportsDir, name))
	if err != nil {
		c.fail(w, r, s, http.StatusNotFound, "no report "+quoteOrEmpty(name))
		return
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		c.fail(w, r, s, http.StatusNotFound, "no report "+quoteOrEmpty(name))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	http.ServeContent(w, r, name, st.ModTime(), f)
}
