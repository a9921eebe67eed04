package composecheck

// The chart's WARC storage and virus scanning: what a first install gets.

import (
	"strings"
	"testing"
)

// dataVolume returns the volume named data of a workload's pod.
func dataVolume(obj map[string]any) map[string]any {
	vols, _ := dig(obj, "spec", "template", "spec", "volumes").([]any)
	for _, v := range vols {
		if dig(v, "name") == "data" {
			return v.(map[string]any)
		}
	}
	return nil
}

// TestChartWARCStorage: by default the workers' WARCs are on a claim the
// chart creates (ReadWriteMany, kept when the release goes), shared with
// the renderers and the provenance role; an existing claim replaces it;
// emptyDirs only when asked for.
func TestChartWARCStorage(t *testing.T) {
	c := loadChart(t, chartDir)
	both := map[string]any{"renderer": map[string]any{"enabled": true}, "provenance": map[string]any{"enabled": true}}
	tests := []struct {
		name      string
		worker    map[string]any
		wantClaim string // "" : an emptyDir
		wantPVC   bool
	}{
		{"default: the chart's claim", nil, "trawler-warcs", true},
		{"an existing claim", map[string]any{"persistence": map[string]any{"existingClaim": "archive"}}, "archive", false},
		{"emptyDir, asked for", map[string]any{"persistence": map[string]any{"emptyDir": true}}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			over := map[string]any{"worker": tc.worker}
			if tc.wantClaim != "" {
				over = mergeValues(over, both)
			}
			ms := render(t, c, over)
			pvcs := find(ms, "PersistentVolumeClaim")
			if pvc := pvcs["trawler-warcs"]; tc.wantPVC != (pvc != nil) || len(pvcs) > 1 {
				t.Fatalf("PersistentVolumeClaims = %v, want the chart's: %v", sortedKeys(pvcs), tc.wantPVC)
			} else if pvc != nil {
				if dig(pvc, "metadata", "annotations", "helm.sh/resource-policy") != "keep" {
					t.Error("the WARCs claim would be deleted with the release: no helm.sh/resource-policy: keep")
				}
				if !equalStrings(dig(pvc, "spec", "accessModes"), "ReadWriteMany") ||
					dig(pvc, "spec", "resources", "requests", "storage") != "500Gi" {
					t.Errorf("WARCs claim spec = %v, want ReadWriteMany, 500Gi", dig(pvc, "spec"))
				}
				if _, ok := dig(pvc, "spec", "storageClassName").(string); ok {
					t.Error("storageClassName set although values leave it empty")
				}
			}
			for name, d := range find(ms, "Deployment") {
				if !strings.Contains(name, "worker") && !strings.Contains(name, "renderer") && !strings.Contains(name, "provenance") {
					continue
				}
				v := dataVolume(d)
				claim, _ := dig(v, "persistentVolumeClaim", "claimName").(string)
				switch {
				case tc.wantClaim != "" && claim != tc.wantClaim:
					t.Errorf("%s data volume = %v, want claim %s", name, v, tc.wantClaim)
				case tc.wantClaim == "" && dig(v, "emptyDir") == nil:
					t.Errorf("%s data volume = %v, want an emptyDir", name, v)
				}
			}
		})
	}
}

// TestChartClamd: the chart deploys no ClamAV, so worker.clamdAddr is
// required, with a message saying what to give; "none" turns scanning
// off (no TRAWLER_CLAMD_ADDR); renderers use the workers' unless given
// their own.
func TestChartClamd(t *testing.T) {
	c := loadChart(t, chartDir)
	_, err := c.Render("trawler", "crawl", nil)
	if err == nil || !strings.Contains(err.Error(), "worker.clamdAddr is required: the clamd (host:port) the workers stream every capture to") ||
		!strings.Contains(err.Error(), "worker.clamdAddr=none crawls without virus scanning") {
		t.Fatalf("defaults without worker.clamdAddr: error = %v", err)
	}
	tests := []struct {
		name                 string
		worker, renderer     string
		wantWorker, wantRend any // nil: no TRAWLER_CLAMD_ADDR
	}{
		{"an address", "clamav.antivirus:3310", "", "clamav.antivirus:3310", "clamav.antivirus:3310"},
		{"the renderer's own", "clamav:3310", "tcp://clamav-render:3310", "clamav:3310", "tcp://clamav-render:3310"},
		{"none", "none", "", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := c.Render("trawler", "crawl", map[string]any{
				"worker":   map[string]any{"clamdAddr": tc.worker},
				"renderer": map[string]any{"enabled": true, "clamdAddr": tc.renderer},
			})
			if err != nil {
				t.Fatal(err)
			}
			deps := find(ms, "Deployment")
			for name, want := range map[string]any{"trawler-worker-npld": tc.wantWorker, "trawler-renderer-npld": tc.wantRend} {
				env := envOf(container(t, deps[name], "spec", "template"))
				got, ok := env["TRAWLER_CLAMD_ADDR"]
				if want == nil && ok || want != nil && got != want {
					t.Errorf("%s TRAWLER_CLAMD_ADDR = %v (set %v), want %v", name, got, ok, want)
				}
			}
		})
	}
}
