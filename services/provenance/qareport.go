package provenance

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/trawler-crawl/trawler/pkg/metawarc"
)

// QAReport is the file `trawler qa` writes into a launch's report
// directory (pkg/qa ReportJSON; named here so that the role does not
// import the browser's packages).
const QAReport = "qa-report.json"

// qaReportItems is the launch's replay QA report as one more metadata
// record, crawl/reports/qa-report.json, when QA ran before the launch was
// sealed; none otherwise. A report that is there but cannot be read fails
// the write, which is retried, rather than seal the launch without it.
func qaReportItems(dir string, uri func(string) string) ([]metawarc.Item, error) {
	b, err := os.ReadFile(filepath.Join(dir, QAReport))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("provenance: read QA report: %w", err)
	}
	return []metawarc.Item{{URI: uri(metawarc.PathReports + QAReport), ContentType: "application/json", Block: b}}, nil
}
