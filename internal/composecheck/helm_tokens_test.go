package composecheck

import (
	"fmt"
	"testing"
)

// The admin tokens and the CDX API's open writes, as the chart passes them
// to the workers and the cdxwriter: nothing by default (the admin API off,
// CDX writes refused), the token files from the Secret, the read-only one
// when its key is given, and TRAWLER_CDX_WRITES_OPEN only on request.
func TestChartAdminTokens(t *testing.T) {
	c := loadChart(t, chartDir)
	const (
		op = "TRAWLER_ADMIN_TOKEN_FILE"
		ro = "TRAWLER_ADMIN_READONLY_TOKEN_FILE"
		wo = "TRAWLER_CDX_WRITES_OPEN"
	)
	for _, tc := range []struct {
		name string
		over map[string]any
		// want is each variable's value in both roles ("" absent), and
		// wo's in the cdxwriter; items the Secret's keys mounted.
		want  map[string]any
		items []string
	}{
		{"defaults", nil, map[string]any{op: nil, ro: nil, wo: nil}, nil},
		{"operator token", map[string]any{"adminToken": map[string]any{"existingSecret": "adm", "key": "tok"}},
			map[string]any{op: "/etc/trawler-admin/tok", ro: nil, wo: nil}, []string{"tok"}},
		{"both tokens", map[string]any{"adminToken": map[string]any{"existingSecret": "adm", "key": "tok", "readOnlyKey": "view"}},
			map[string]any{op: "/etc/trawler-admin/tok", ro: "/etc/trawler-admin/view", wo: nil}, []string{"tok", "view"}},
		{"open writes", map[string]any{"cdxwriter": map[string]any{"writesOpen": true}},
			map[string]any{op: nil, ro: nil, wo: "true"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := render(t, c, tc.over)
			for _, w := range []map[string]any{find(ms, "Deployment")["trawler-worker-npld"], find(ms, "StatefulSet")["trawler-cdxwriter"]} {
				name := dig(w, "metadata", "name")
				env := envOf(container(t, w, "spec", "template"))
				for k, want := range tc.want {
					if k == wo && name != "trawler-cdxwriter" {
						want = nil
					}
					if got := env[k]; got != want {
						t.Errorf("%s %s = %v, want %v", name, k, got, want)
					}
				}
				var items []string
				for _, v := range dig(w, "spec", "template", "spec", "volumes").([]any) {
					if dig(v, "name") == "admin-token" {
						for _, it := range dig(v, "secret", "items").([]any) {
							items = append(items, fmt.Sprint(dig(it, "key")))
						}
					}
				}
				if fmt.Sprint(items) != fmt.Sprint(tc.items) {
					t.Errorf("%s admin-token items %v, want %v", name, items, tc.items)
				}
			}
		})
	}
}
