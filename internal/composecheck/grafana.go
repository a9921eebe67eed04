package composecheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
)

// Directories of Grafana provisioning files, relative to the repository
// root.
const (
	GrafanaDatasources = "deploy/grafana/provisioning/datasources"
	GrafanaProviders   = "deploy/grafana/provisioning/dashboards"
)

// grafanaDatasources is a Grafana datasource provisioning file, decoded
// strictly.
type grafanaDatasources struct {
	APIVersion        int              `yaml:"apiVersion"`
	DeleteDatasources []map[string]any `yaml:"deleteDatasources"`
	Datasources       []struct {
		Name           string         `yaml:"name"`
		UID            string         `yaml:"uid"`
		Type           string         `yaml:"type"`
		Access         string         `yaml:"access"`
		URL            string         `yaml:"url"`
		OrgID          int            `yaml:"orgId"`
		IsDefault      bool           `yaml:"isDefault"`
		Editable       bool           `yaml:"editable"`
		JSONData       map[string]any `yaml:"jsonData"`
		SecureJSONData map[string]any `yaml:"secureJsonData"`
	} `yaml:"datasources"`
}

// grafanaProviders is a Grafana dashboard-provider provisioning file,
// decoded strictly.
type grafanaProviders struct {
	APIVersion int `yaml:"apiVersion"`
	Providers  []struct {
		Name                  string `yaml:"name"`
		OrgID                 int    `yaml:"orgId"`
		Folder                string `yaml:"folder"`
		FolderUID             string `yaml:"folderUid"`
		Type                  string `yaml:"type"`
		DisableDeletion       bool   `yaml:"disableDeletion"`
		UpdateIntervalSeconds int    `yaml:"updateIntervalSeconds"`
		AllowUIUpdates        bool   `yaml:"allowUiUpdates"`
		Options               struct {
			Path                      string `yaml:"path"`
			FoldersFromFilesStructure bool   `yaml:"foldersFromFilesStructure"`
		} `yaml:"options"`
	} `yaml:"providers"`
}

// checkGrafana checks the datasource and dashboard provisioning files:
// they parse, datasources point at compose services, and each dashboard
// provider's directory reaches the Grafana container through a bind mount
// and holds dashboards that use provisioned datasources.
func checkGrafana(p *types.Project, root string) []error {
	uids, errs := checkDatasources(p, root)
	return append(errs, checkProviders(p, root, uids)...)
}

// yamlFiles lists the .yml and .yaml files of a directory, sorted.
func yamlFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yml" || ext == ".yaml") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}

func checkDatasources(p *types.Project, root string) (map[string]bool, []error) {
	files, err := yamlFiles(filepath.Join(root, GrafanaDatasources))
	if err != nil {
		return nil, []error{fmt.Errorf("grafana datasources: %w", err)}
	}
	uids := map[string]bool{}
	var errs []error
	defaults := 0
	for _, f := range files {
		var ds grafanaDatasources
		data, err := os.ReadFile(f)
		if err == nil {
			err = decodeStrict(data, &ds)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rel(root, f), err))
			continue
		}
		for i, d := range ds.Datasources {
			where := fmt.Sprintf("%s: datasources[%d] (%q)", rel(root, f), i, d.Name)
			if d.Name == "" || d.Type == "" {
				errs = append(errs, fmt.Errorf("%s: name and type are required", where))
			}
			if d.UID != "" {
				if uids[d.UID] {
					errs = append(errs, fmt.Errorf("%s: uid %q is used twice", where, d.UID))
				}
				uids[d.UID] = true
			}
			if d.IsDefault {
				defaults++
			}
			if err := composeURL(p, d.URL); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
			}
		}
	}
	if defaults > 1 {
		errs = append(errs, fmt.Errorf("%s: %d datasources are marked isDefault; Grafana allows one", GrafanaDatasources, defaults))
	}
	return uids, errs
}

// composeURL requires an http(s) URL whose host is a compose service.
func composeURL(p *types.Project, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q is not an http(s) URL", raw)
	}
	host := u.Host
	if h, _, err := net.SplitHostPort(u.Host); err == nil {
		host = h
	}
	if _, ok := p.Services[host]; !ok {
		return fmt.Errorf("url %q: no compose service %q", raw, host)
	}
	return nil
}

func checkProviders(p *types.Project, root string, uids map[string]bool) []error {
	files, err := yamlFiles(filepath.Join(root, GrafanaProviders))
	if err != nil {
		return []error{fmt.Errorf("grafana dashboard providers: %w", err)}
	}
	var errs []error
	for _, f := range files {
		var pv grafanaProviders
		data, err := os.ReadFile(f)
		if err == nil {
			err = decodeStrict(data, &pv)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rel(root, f), err))
			continue
		}
		service, _, ok := mountedAt(p, f)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: no service mounts it", rel(root, f)))
			continue
		}
		for i, prov := range pv.Providers {
			where := fmt.Sprintf("%s: providers[%d] (%q)", rel(root, f), i, prov.Name)
			if prov.Type != "" && prov.Type != "file" {
				errs = append(errs, fmt.Errorf("%s: type %q is not file", where, prov.Type))
				continue
			}
			host, ok := hostPathOf(p.Services[service], prov.Options.Path)
			if !ok {
				errs = append(errs, fmt.Errorf("%s: options.path %q is not bind-mounted into service %q", where, prov.Options.Path, service))
				continue
			}
			if err := checkDashboardDir(host, uids); err != nil {
				errs = append(errs, fmt.Errorf("%s: options.path %q (%s on the host): %w", where, prov.Options.Path, rel(root, host), err))
			}
		}
	}
	return errs
}

// checkDashboardDir requires at least one dashboard in dir, each valid
// JSON with a uid and a title, whose panels use provisioned datasources.
func checkDashboardDir(dir string, uids map[string]bool) error {
	matches, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	if len(matches) == 0 {
		return errors.New("no *.json dashboards")
	}
	var errs []error
	for _, m := range matches {
		if err := checkDashboard(m, uids); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(m), err))
		}
	}
	return errors.Join(errs...)
}

// dashboardPanel is the part of a Grafana panel the check reads; rows
// nest their panels.
type dashboardPanel struct {
	Title      string           `json:"title"`
	Datasource json.RawMessage  `json:"datasource"`
	Panels     []dashboardPanel `json:"panels"`
}

func checkDashboard(file string, uids map[string]bool) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var d struct {
		UID    string           `json:"uid"`
		Title  string           `json:"title"`
		Panels []dashboardPanel `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return jsonError(data, err)
	}
	if d.UID == "" || d.Title == "" {
		return errors.New("uid and title are required")
	}
	return checkPanels(d.Panels, uids)
}

func checkPanels(panels []dashboardPanel, uids map[string]bool) error {
	for _, pn := range panels {
		var ds struct {
			UID string `json:"uid"`
		}
		// A datasource may also be a name string or absent (the default).
		if len(pn.Datasource) > 0 && json.Unmarshal(pn.Datasource, &ds) == nil && ds.UID != "" {
			if !uids[ds.UID] && !strings.HasPrefix(ds.UID, "$") {
				return fmt.Errorf("panel %q uses datasource uid %q, which is not provisioned", pn.Title, ds.UID)
			}
		}
		if err := checkPanels(pn.Panels, uids); err != nil {
			return err
		}
	}
	return nil
}

// jsonError adds the line and column to a JSON syntax error.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	// Offset counts the bytes read, including the one at fault.
	before := string(data[:min(max(int(se.Offset)-1, 0), len(data))])
	line := 1 + strings.Count(before, "\n")
	col := len(before) - strings.LastIndex(before, "\n")
	return fmt.Errorf("line %d column %d: %w", line, col, err)
}
