package qa

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// File names of a report in a launch's report directory (beside its
// harvest statistics), where the provenance role finds the JSON when it
// seals the launch.
const (
	ReportJSON = "qa-report.json"
	ReportHTML = "qa-report.html"
)

// Report is one QA run over a launch (or any selection of pages).
type Report struct {
	Crawl  string    `json:"crawl,omitempty"`
	Source string    `json:"source,omitempty"`
	Launch string    `json:"launch,omitempty"`
	Made   time.Time `json:"made"`
	// Pages is how many were checked; Errors, how many could not be.
	Pages  int `json:"pages"`
	Errors int `json:"errors"`
	// BySeverity counts pages by grade.
	BySeverity map[string]int `json:"by_severity"`
	// MeanScore is the mean page score (0 when there are no pages).
	MeanScore float64 `json:"mean_score"`
	// Requests counts every page's requests by outcome; Missing is the
	// distinct URLs missing over all pages.
	Requests map[string]int `json:"requests"`
	Missing  int            `json:"missing"`
	// BadLines are the crawl.log lines that could not be read.
	BadLines []string `json:"bad_lines,omitempty"`
	// Results are the pages, worst first.
	Results []PageResult `json:"results"`
}

// NewReport sums results up, worst page first (lowest score, then most
// missing, then URL).
func NewReport(results []PageResult, bad []LineError, made time.Time) *Report {
	r := &Report{Made: made.UTC(), Pages: len(results), BySeverity: map[string]int{string(Good): 0, string(Moderate): 0, string(Severe): 0},
		Requests: map[string]int{}, Results: slices.Clone(results)}
	missing := map[string]bool{}
	sum := 0.0
	for _, p := range results {
		if p.Error != "" {
			r.Errors++
		}
		r.BySeverity[string(p.Severity)]++
		sum += p.Score
		for k, n := range p.Outcomes {
			r.Requests[k] += n
		}
		for _, u := range p.Missing {
			missing[u] = true
		}
	}
	r.Missing = len(missing)
	if len(results) > 0 {
		r.MeanScore = sum / float64(len(results))
	}
	for _, e := range bad {
		r.BadLines = append(r.BadLines, e.Error())
	}
	slices.SortStableFunc(r.Results, func(a, b PageResult) int {
		switch {
		case a.Score != b.Score:
			if a.Score < b.Score {
				return -1
			}
			return 1
		case len(a.Missing) != len(b.Missing):
			return len(b.Missing) - len(a.Missing)
		}
		return strings.Compare(a.URL, b.URL)
	})
	return r
}

// Summary is the report's figures on one line, for logs.
func (r *Report) Summary() string {
	return fmt.Sprintf("%d pages (%d good, %d moderate, %d severe, %d not loaded), mean score %.3f, requests %v, %d distinct URLs missing",
		r.Pages, r.BySeverity[string(Good)], r.BySeverity[string(Moderate)], r.BySeverity[string(Severe)], r.Errors, r.MeanScore, r.Requests, r.Missing)
}

// JSON is the report as indented JSON.
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("qa report: %w", err)
	}
	return append(b, '\n'), nil
}

//go:embed report.html.tmpl
var reportTemplate string

var reportPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": func(f *float64) string {
		if f == nil {
			return "–"
		}
		return fmt.Sprintf("%.1f%%", *f*100)
	},
	"score": func(f float64) string { return fmt.Sprintf("%.3f", f) },
}).Parse(reportTemplate))

// HTML is the report as one self-contained page (no script, no external
// style or image), every value escaped by html/template.
func (r *Report) HTML() ([]byte, error) {
	var b bytes.Buffer
	if err := reportPage.Execute(&b, r); err != nil {
		return nil, fmt.Errorf("qa report page: %w", err)
	}
	return b.Bytes(), nil
}

// WriteFiles writes ReportJSON and ReportHTML into dir, each replaced
// whole (written beside, then renamed).
func (r *Report) WriteFiles(dir string) error {
	js, err := r.JSON()
	if err != nil {
		return err
	}
	page, err := r.HTML()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("qa report: %w", err)
	}
	for name, data := range map[string][]byte{ReportJSON: js, ReportHTML: page} {
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return fmt.Errorf("qa report: %w", err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("qa report: %w", err)
		}
	}
	return nil
}
