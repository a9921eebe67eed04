package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/trawler-crawl/trawler/pkg/sheets/beanpath"
	"github.com/trawler-crawl/trawler/profiles"
)

// Sheets is the profile's sheets section: named setting overrides
// (Heritrix's Sheet beans) and their association to SURT prefixes
// (SurtPrefixesSheetAssociation):
//
//	sheets:
//	  include: [ukwa]                       # shipped sheet sets, by name
//	  definitions:
//	    slow:                               # a sheet: dotted keys and values
//	      politeness.minDelayMs: 10000
//	      disposition.maxDelayMs: 60000     # Heritrix bean paths work too
//	  associations:
//	    - surtPrefixes: ["http://(uk,co,example,", "https://www.example.org/"]
//	      sheets: [slow, noForms]
//
// Definitions of the profile replace included ones of the same name. Keys
// are the profile's dotted keys or the Heritrix/UKWA bean paths that launch
// messages carry in targetSheet (see Setting.Resolve); an unknown key is a
// load error naming the sheet, the key and its line. pkg/sheets turns the
// section into per-URI effective settings.
//
// A Sheets value is immutable once decoded: copies of a Profile share it, so
// copying a profile never copies sheet data, and Profile stays comparable.
type Sheets struct{ d *sheetsData }

type sheetsData struct {
	include []string
	defs    []Sheet
	assocs  []Association
}

// Sheet is one named map of setting overrides, in file order.
type Sheet struct {
	Name string
	// Origin says where the sheet comes from: "profile", "set:NAME" for a
	// shipped sheet set, or "launch" for a launch message's targetSheet.
	Origin   string
	Line     int
	Settings []Setting
}

// Setting is one override as written. Line is its line in the YAML file (0
// when it did not come from a file).
type Setting struct {
	Key   string
	Value *yaml.Node
	Line  int
}

// Association attaches sheets, in order, to SURT prefixes. Prefixes are as
// written; pkg/sheets normalises them.
type Association struct {
	SurtPrefixes []string
	Sheets       []string
	Line         int
}

// NewSheets builds a sheets section in code. It keeps copies of the
// slices, so the section stays immutable.
func NewSheets(include []string, defs []Sheet, assocs []Association) Sheets {
	if len(include) == 0 && len(defs) == 0 && len(assocs) == 0 {
		return Sheets{}
	}
	return Sheets{d: &sheetsData{include: append([]string(nil), include...),
		defs: append([]Sheet(nil), defs...), assocs: append([]Association(nil), assocs...)}}
}

// IsZero reports an empty section (no includes, definitions or associations).
func (s Sheets) IsZero() bool { return s.d == nil }

// Include lists the shipped sheet sets the profile includes.
func (s Sheets) Include() []string {
	if s.d == nil {
		return nil
	}
	return append([]string(nil), s.d.include...)
}

// Definitions returns the profile's own sheets, without included ones.
func (s Sheets) Definitions() []Sheet {
	if s.d == nil {
		return nil
	}
	return append([]Sheet(nil), s.d.defs...)
}

// Associations returns the profile's sheet associations in file order.
func (s Sheets) Associations() []Association {
	if s.d == nil {
		return nil
	}
	return append([]Association(nil), s.d.assocs...)
}

// Catalog returns every sheet the profile can apply by name: the included
// sets in order, then the profile's own definitions, a later definition
// replacing an earlier one of the same name.
func (s Sheets) Catalog() (map[string]Sheet, error) {
	out := map[string]Sheet{}
	for _, name := range s.Include() {
		set, err := LoadSheetSet(name)
		if err != nil {
			return nil, err
		}
		for _, sh := range set {
			out[sh.Name] = sh
		}
	}
	for _, sh := range s.Definitions() {
		out[sh.Name] = sh
	}
	return out, nil
}

// LoadSheetSet parses a shipped sheet set (profiles/sheets/NAME.yaml): a
// document with a `definitions` mapping, the shape of a profile's
// sheets.definitions. Every key is checked as validate checks a profile's.
func LoadSheetSet(name string) ([]Sheet, error) {
	b, err := profiles.SheetSet(name)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("sheet set %s: %w", name, err)
	}
	var s Sheets
	if len(doc.Content) > 0 {
		if err := s.UnmarshalYAML(doc.Content[0]); err != nil {
			return nil, fmt.Errorf("sheet set %s: %w", name, err)
		}
	}
	if len(s.Include()) > 0 || len(s.Associations()) > 0 {
		return nil, fmt.Errorf("sheet set %s: a sheet set holds only definitions", name)
	}
	defs := s.Definitions()
	for i := range defs {
		defs[i].Origin = "set:" + name
		if err := defs[i].check(); err != nil {
			return nil, fmt.Errorf("sheet set %s: %w", name, err)
		}
	}
	return defs, nil
}

func (s Sheets) validate() error {
	if s.d == nil {
		return nil
	}
	var errs []error
	for _, name := range s.d.include {
		if _, err := profiles.SheetSet(name); err != nil {
			errs = append(errs, fmt.Errorf("sheets.include: %w", err))
		}
	}
	for _, sh := range s.d.defs {
		errs = append(errs, sh.check())
	}
	if cat, err := s.Catalog(); err == nil {
		for _, a := range s.d.assocs {
			errs = append(errs, a.check(cat))
		}
	}
	return errors.Join(errs...)
}

// check verifies that every key names a setting and every value fits it.
func (sh Sheet) check() error {
	var errs []error
	for _, st := range sh.Settings {
		if err := st.Check(); err != nil {
			errs = append(errs, fmt.Errorf("sheets.definitions.%s: line %d: %w", sh.Name, st.Line, err))
		}
	}
	return errors.Join(errs...)
}

func (a Association) check(cat map[string]Sheet) error {
	if len(a.SurtPrefixes) == 0 || len(a.Sheets) == 0 {
		return fmt.Errorf("sheets.associations: line %d: need at least one of surtPrefixes and of sheets", a.Line)
	}
	var errs []error
	for _, p := range a.SurtPrefixes {
		if strings.TrimSpace(p) == "" {
			errs = append(errs, fmt.Errorf("sheets.associations: line %d: empty SURT prefix", a.Line))
		}
	}
	for _, n := range a.Sheets {
		if _, ok := cat[n]; !ok {
			errs = append(errs, fmt.Errorf("sheets.associations: line %d: no sheet named %q", a.Line, n))
		}
	}
	return errors.Join(errs...)
}

// Resolved is a setting mapped onto the profile.
type Resolved struct {
	// Key is the dotted profile key set, or "" when the setting is a
	// Heritrix bean path Trawler recognises but has no equivalent for.
	Key   string
	Value *yaml.Node
	// Note says why a recognised setting has no effect.
	Note string
}

// Resolve maps the setting onto the profile: a dotted profile key
// ("politeness.minDelayMs") as it is, or a Heritrix/UKWA bean path
// ("disposition.minDelayMs", "queueAssignmentPolicy.parallelQueues") to the
// profile key with the same meaning, converting the value where units or
// types differ. Unknown keys are an error.
func (s Setting) Resolve() (Resolved, error) {
	if s.Value == nil || s.Value.ShortTag() == "!!null" {
		return Resolved{}, fmt.Errorf("setting %q: no value", s.Key)
	}
	_, err := settingType(s.Key)
	if err == nil {
		return Resolved{Key: s.Key, Value: s.Value}, nil
	}
	if a, ok := beanpath.Lookup(s.Key); ok {
		return resolveAlias(s, a)
	}
	return Resolved{}, err
}

// Check resolves the setting and checks that its value fits the setting's
// type. It does not check relations between settings (minDelayMs <=
// maxDelayMs): those depend on the profile the sheet is applied to.
func (s Setting) Check() error {
	r, err := s.Resolve()
	if err != nil || r.Key == "" {
		return err
	}
	if err := wholeNumber(r); err != nil {
		return fmt.Errorf("%s: %w", s.Key, err)
	}
	p := Default()
	if err := decodeOverlay(&p, []Resolved{r}); err != nil {
		return fmt.Errorf("%s: %w", s.Key, err)
	}
	return nil
}

// wholeNumber rejects a fractional value for an integer setting, which the
// YAML decoder would silently truncate (2.5 parallel queues becoming 2).
func wholeNumber(r Resolved) error {
	t, err := settingType(r.Key)
	if err != nil || r.Value.Kind != yaml.ScalarNode || r.Value.ShortTag() != "!!float" {
		return nil
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return nil
	}
	var f float64
	if err := r.Value.Decode(&f); err != nil || f != math.Trunc(f) {
		return fmt.Errorf("%s is not a whole number", r.Value.Value)
	}
	return nil
}

// SettingFromJSON reads one targetSheet entry of a launch message. JSON
// values are YAML, so they decode as a profile value would; a JSON string
// holding a number or boolean ("300", "true") is taken as that number or
// boolean, as Heritrix's Spring conversion does.
func SettingFromJSON(key string, raw json.RawMessage) (Setting, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 {
		return Setting{}, fmt.Errorf("targetSheet %s: value %s is not JSON", key, raw)
	}
	v := doc.Content[0]
	if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
		var plain yaml.Node
		if yaml.Unmarshal([]byte(v.Value), &plain) == nil && len(plain.Content) == 1 {
			switch plain.Content[0].Tag {
			case "!!int", "!!float", "!!bool":
				v = plain.Content[0]
			}
		}
	}
	return Setting{Key: key, Value: v}, nil
}

// WithSettings returns a copy of p with the settings applied in order (a
// later value for the same key wins), validated as a whole. Settings with
// no Trawler equivalent are skipped. Validation includes p's own sheets
// section, so per-URI callers clear it first (pkg/sheets does).
func (p Profile) WithSettings(settings []Setting) (Profile, error) {
	rs := make([]Resolved, 0, len(settings))
	for _, s := range settings {
		r, err := s.Resolve()
		if err != nil {
			return p, err
		}
		if r.Key != "" {
			rs = append(rs, r)
		}
	}
	next := p
	if err := decodeOverlay(&next, rs); err != nil {
		return p, err
	}
	if err := next.Validate(); err != nil {
		return p, err
	}
	return next, nil
}

// decodeOverlay decodes the resolved settings into p as one nested YAML
// mapping, without validating the result.
func decodeOverlay(p *Profile, rs []Resolved) error {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	for _, r := range rs {
		m := doc
		parts := strings.Split(r.Key, ".")
		for _, part := range parts[:len(parts)-1] {
			m = childMapping(m, part)
		}
		setMappingValue(m, parts[len(parts)-1], r.Value)
	}
	if err := doc.Decode(p); err != nil {
		return errors.New(cleanYAMLError(err))
	}
	return nil
}

func childMapping(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	child := &yaml.Node{Kind: yaml.MappingNode}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, child)
	return child
}

func setMappingValue(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
}

// cleanYAMLError drops yaml's "unmarshal errors" header and the line numbers
// of the synthetic overlay document, which would mislead.
func cleanYAMLError(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		if rest, ok := strings.CutPrefix(m, "line "); ok {
			if _, after, ok := strings.Cut(rest, ": "); ok {
				m = after
			}
		}
		msgs[i] = m
	}
	return strings.Join(msgs, "; ")
}

// settingType finds the profile field a dotted key names, by the yaml tags
// of Profile. Only single settings qualify, not whole sections, and the
// sheets section cannot override itself.
func settingType(key string) (reflect.Type, error) {
	parts := strings.Split(key, ".")
	if parts[0] == "sheets" {
		return nil, fmt.Errorf("setting %q: a sheet cannot override the sheets section", key)
	}
	t := reflect.TypeOf(Profile{})
	for i, part := range parts {
		f, ok := fieldByTag(t, part)
		if !ok {
			return nil, fmt.Errorf("unknown setting %q (no %q in %s)", key, part, orTop(strings.Join(parts[:i], ".")))
		}
		t = f.Type
	}
	if t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()) {
		return nil, fmt.Errorf("setting %q is a section, not a single setting", key)
	}
	return t, nil
}

func orTop(s string) string {
	if s == "" {
		return "the profile"
	}
	return s
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == name && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// resolveAlias maps a Heritrix bean path onto its profile key.
func resolveAlias(s Setting, a beanpath.Alias) (Resolved, error) {
	if a.Target == "" {
		return Resolved{Note: a.Note}, nil
	}
	if _, err := settingType(a.Target); err != nil {
		return Resolved{}, fmt.Errorf("unknown setting %q (Heritrix bean path for %s, which does not exist)", s.Key, a.Target)
	}
	v := s.Value
	if a.Convert != nil {
		nv, note, err := a.Convert(v)
		if err != nil {
			return Resolved{}, fmt.Errorf("%s: %s", s.Key, cleanYAMLError(err))
		}
		if nv == nil {
			return Resolved{Note: note}, nil
		}
		v = nv
	}
	return Resolved{Key: a.Target, Value: v}, nil
}

// UnmarshalYAML reads the section strictly: unknown keys, duplicate sheet
// names and duplicate keys within a sheet are errors with their line.
// Decoding replaces any earlier section.
func (s *Sheets) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		*s = Sheets{}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: sheets: want a mapping with include, definitions, associations", n.Line)
	}
	var d sheetsData
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var err error
		switch k.Value {
		case "include":
			d.include, err = stringList(v, "sheets.include")
		case "definitions":
			d.defs, err = parseDefinitions(v)
		case "associations":
			d.assocs, err = parseAssociations(v)
		default:
			err = fmt.Errorf("line %d: field %s not found in sheets (want include, definitions, associations)", k.Line, k.Value)
		}
		if err != nil {
			return err
		}
	}
	*s = NewSheets(d.include, d.defs, d.assocs)
	return nil
}

func parseDefinitions(n *yaml.Node) ([]Sheet, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: sheets.definitions: want a mapping of sheet names to settings", n.Line)
	}
	var defs []Sheet
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if prev, dup := seen[k.Value]; dup || k.Value == "" {
			return nil, fmt.Errorf("line %d: sheets.definitions: sheet %q empty or defined twice (first at line %d)", k.Line, k.Value, prev)
		}
		seen[k.Value] = k.Line
		sh := Sheet{Name: k.Value, Origin: "profile", Line: k.Line}
		if v.Kind != yaml.MappingNode && v.Tag != "!!null" {
			return nil, fmt.Errorf("line %d: sheets.definitions.%s: want a mapping of settings to values", v.Line, k.Value)
		}
		keys := map[string]int{}
		for j := 0; j+1 < len(v.Content); j += 2 {
			sk, sv := v.Content[j], v.Content[j+1]
			if prev, dup := keys[sk.Value]; dup {
				return nil, fmt.Errorf("line %d: sheets.definitions.%s: key %s set twice (first at line %d)", sk.Line, k.Value, sk.Value, prev)
			}
			keys[sk.Value] = sk.Line
			sh.Settings = append(sh.Settings, Setting{Key: sk.Value, Value: sv, Line: sk.Line})
		}
		defs = append(defs, sh)
	}
	return defs, nil
}

func parseAssociations(n *yaml.Node) ([]Association, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: sheets.associations: want a list of {surtPrefixes, sheets}", n.Line)
	}
	var out []Association
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: sheets.associations: want {surtPrefixes: [...], sheets: [...]}", item.Line)
		}
		a := Association{Line: item.Line}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			var err error
			switch k.Value {
			case "surtPrefixes":
				a.SurtPrefixes, err = stringList(v, "sheets.associations.surtPrefixes")
			case "sheets":
				a.Sheets, err = stringList(v, "sheets.associations.sheets")
			default:
				err = fmt.Errorf("line %d: field %s not found in a sheet association (want surtPrefixes, sheets)", k.Line, k.Value)
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, a)
	}
	return out, nil
}

func stringList(n *yaml.Node, what string) ([]string, error) {
	var out []string
	if err := n.Decode(&out); err != nil {
		return nil, fmt.Errorf("line %d: %s: want a list of strings", n.Line, what)
	}
	return out, nil
}

// MarshalYAML writes the section back in the shape UnmarshalYAML reads.
func (s Sheets) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	if s.d == nil {
		return n, nil
	}
	add := func(k string, v *yaml.Node) {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
	}
	if len(s.d.include) > 0 {
		add("include", strings2Node(s.d.include))
	}
	if len(s.d.defs) > 0 {
		defs := &yaml.Node{Kind: yaml.MappingNode}
		for _, sh := range s.d.defs {
			m := &yaml.Node{Kind: yaml.MappingNode}
			for _, st := range sh.Settings {
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: st.Key}, st.Value)
			}
			defs.Content = append(defs.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: sh.Name}, m)
		}
		add("definitions", defs)
	}
	if len(s.d.assocs) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, a := range s.d.assocs {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Value: "surtPrefixes"}, strings2Node(a.SurtPrefixes),
				{Kind: yaml.ScalarNode, Value: "sheets"}, strings2Node(a.Sheets),
			}})
		}
		add("associations", seq)
	}
	return n, nil
}

func strings2Node(ss []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range ss {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s})
	}
	return n
}
