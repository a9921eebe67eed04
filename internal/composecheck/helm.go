package composecheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"
)

// Chart is a Helm chart read from disk: its metadata, its default values
// and its templates, parsed into one template set as Helm does, so
// templates can include each other's definitions.
//
// There is no helm binary in the build environment, so Render stands in
// for `helm template`: Go's text/template with the Helm functions the
// chart uses (see chartFuncs). A template calling any other function fails
// to load, which says which function to add.
type Chart struct {
	// Meta is Chart.yaml.
	Meta ChartMeta
	// Values is values.yaml, the defaults Render's overrides apply to.
	Values map[string]any

	tmpl      *template.Template // every template file, by path
	manifests []string           // templates/*.yaml, in name order
	dir       string             // the chart directory, for .Files
}

// chartFiles is .Files: the chart's non-template files. Get fails on a
// missing file where Helm would return "", so a template cannot silently
// render an empty profile.
type chartFiles struct{ dir string }

// Get returns the file at name, relative to the chart directory.
func (f chartFiles) Get(name string) (string, error) {
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf(".Files.Get %q: not a path inside the chart", name)
	}
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		return "", fmt.Errorf(".Files.Get: %w", err)
	}
	return string(b), nil
}

// ChartMeta is Chart.yaml, decoded strictly.
type ChartMeta struct {
	APIVersion   string            `yaml:"apiVersion"`
	Name         string            `yaml:"name"`
	Description  string            `yaml:"description"`
	Type         string            `yaml:"type"`
	Version      string            `yaml:"version"`
	AppVersion   string            `yaml:"appVersion"`
	KubeVersion  string            `yaml:"kubeVersion"`
	Keywords     []string          `yaml:"keywords"`
	Home         string            `yaml:"home"`
	Sources      []string          `yaml:"sources"`
	Maintainers  []map[string]any  `yaml:"maintainers"`
	Icon         string            `yaml:"icon"`
	Annotations  map[string]string `yaml:"annotations"`
	Dependencies []map[string]any  `yaml:"dependencies"`
	Deprecated   bool              `yaml:"deprecated"`
}

// Manifest is one rendered Kubernetes object.
type Manifest struct {
	// Template is the file it came from, e.g. "templates/worker-deployment.yaml".
	Template string
	// Object is the parsed YAML document.
	Object map[string]any
}

// Kind returns the object's kind and metadata.name.
func (m Manifest) Kind() (kind, name string) {
	kind, _ = m.Object["kind"].(string)
	name, _ = dig(m.Object, "metadata", "name").(string)
	return kind, name
}

var semver = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// LoadChart reads dir/Chart.yaml, dir/values.yaml and every file in
// dir/templates. Each template is first checked for balanced delimiters
// (CheckBraces), so a stray "{{" is reported at its own line and column.
func LoadChart(dir string) (*Chart, error) {
	c := &Chart{dir: dir}
	if err := readYAMLFile(filepath.Join(dir, "Chart.yaml"), &c.Meta, true); err != nil {
		return nil, err
	}
	if c.Meta.APIVersion != "v2" || c.Meta.Name == "" || !semver.MatchString(c.Meta.Version) {
		return nil, fmt.Errorf("helm chart: Chart.yaml needs apiVersion v2, a name and a SemVer version; have %q, %q, %q",
			c.Meta.APIVersion, c.Meta.Name, c.Meta.Version)
	}
	if err := readYAMLFile(filepath.Join(dir, "values.yaml"), &c.Values, false); err != nil {
		return nil, err
	}
	if c.Values == nil {
		c.Values = map[string]any{}
	}
	files, err := filepath.Glob(filepath.Join(dir, "templates", "*"))
	if err != nil {
		return nil, fmt.Errorf("list templates: %w", err)
	}
	sort.Strings(files)
	c.tmpl = template.New(c.Meta.Name).Option("missingkey=error")
	c.tmpl.Funcs(chartFuncs(c.tmpl))
	for _, f := range files {
		if err := c.addTemplate(dir, f); err != nil {
			return nil, err
		}
	}
	if len(c.manifests) == 0 {
		return nil, fmt.Errorf("chart %s has no templates/*.yaml", dir)
	}
	return c, nil
}

// addTemplate parses one template file into the chart's set. Files whose
// names start with "_" only define helpers, as in Helm.
func (c *Chart) addTemplate(dir, file string) error {
	name, err := filepath.Rel(dir, file)
	if err != nil {
		return err
	}
	name = filepath.ToSlash(name)
	base := filepath.Base(file)
	isManifest := strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml")
	if !isManifest && !strings.HasSuffix(base, ".tpl") {
		return nil // NOTES.txt and the like are not manifests
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read template: %w", err)
	}
	if err := CheckBraces(name, string(src)); err != nil {
		return err
	}
	if _, err := c.tmpl.New(name).Parse(string(src)); err != nil {
		return fmt.Errorf("parse %w", err)
	}
	if isManifest && !strings.HasPrefix(base, "_") {
		c.manifests = append(c.manifests, name)
	}
	return nil
}

// readYAMLFile decodes a YAML file into v, strictly when asked.
func readYAMLFile(file string, v any, strict bool) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(file), err)
	}
	if strict {
		err = decodeStrict(data, v)
	} else {
		err = yaml.Unmarshal(data, v)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(file), err)
	}
	return nil
}

// Render renders every manifest template for a release, with the chart's
// values overlaid by overrides (maps merge key by key, anything else
// replaces), and parses each YAML document of the output. A reference to
// a value that does not exist is an error, where Helm would silently
// render an empty string. Numbers in values are float64, as Helm's JSON
// round trip makes them, so a template printing 1000000 shows the same
// "1e+06" it would under Helm.
func (c *Chart) Render(release, namespace string, overrides map[string]any) ([]Manifest, error) {
	data := map[string]any{
		"Values": helmNumbers(mergeValues(c.Values, overrides)).(map[string]any),
		"Files":  chartFiles{dir: c.dir},
		"Chart": map[string]any{
			"Name": c.Meta.Name, "Version": c.Meta.Version, "AppVersion": c.Meta.AppVersion,
		},
		"Release": map[string]any{
			"Name": release, "Namespace": namespace, "Service": "Helm",
			"IsInstall": true, "IsUpgrade": false, "Revision": 1,
		},
	}
	var out []Manifest
	for _, name := range c.manifests {
		var buf bytes.Buffer
		if err := c.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
			return nil, fmt.Errorf("render %w", err)
		}
		docs, err := splitManifests(name, buf.Bytes())
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}

// splitManifests parses a template's output into its YAML documents,
// skipping empty ones (a template whose condition is false renders none).
func splitManifests(name string, rendered []byte) ([]Manifest, error) {
	dec := yaml.NewDecoder(bytes.NewReader(rendered))
	var out []Manifest
	for i := 0; ; i++ {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: rendered document %d is not valid YAML: %w\n--- rendered output ---\n%s", name, i, err, numbered(rendered))
		}
		if len(obj) > 0 {
			out = append(out, Manifest{Template: name, Object: obj})
		}
	}
}

// numbered prefixes each line with its number, for error messages about
// rendered output (whose line numbers the YAML error refers to).
func numbered(text []byte) string {
	var b strings.Builder
	for i, line := range strings.Split(string(text), "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, line)
	}
	return b.String()
}

// mergeValues returns base overlaid with over, without changing either.
func mergeValues(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		bm, ok1 := out[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = mergeValues(bm, om)
			continue
		}
		out[k] = v
	}
	return out
}

// helmNumbers returns a copy of v with every integer turned into a
// float64.
func helmNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = helmNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = helmNumbers(e)
		}
		return out
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return v
}

// dig walks nested maps by key and returns nil where the path ends.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
