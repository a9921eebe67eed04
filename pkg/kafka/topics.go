package kafka

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// TopicSpec is the wanted state of one topic.
type TopicSpec struct {
	Name       string
	Partitions int32
	// ReplicationFactor -1 means the broker's default.
	ReplicationFactor int16
	// Configs are topic-level configs (retention.ms, compression.type, ...).
	Configs map[string]string
}

// topicsFile is the YAML layout of kafka-topics/topics.yaml.
type topicsFile struct {
	Defaults topicFields   `yaml:"defaults"`
	Topics   []topicFields `yaml:"topics"`
}

// topicFields are the settings of one topic or of the defaults; nil means
// not set here.
type topicFields struct {
	Name              string            `yaml:"name"`
	Partitions        *int32            `yaml:"partitions"`
	ReplicationFactor *int16            `yaml:"replicationFactor"`
	Configs           map[string]string `yaml:"configs"`
}

// ParseTopics parses a topics file strictly: unknown keys, wrong types,
// missing or duplicate names, impossible partition or replication counts and
// unknown or malformed configs are errors naming the line. Every problem
// found is reported, not just the first. Topics inherit the defaults
// section; their own configs override it key by key.
func ParseTopics(data []byte) ([]TopicSpec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f topicsFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("topics: empty file")
		}
		return nil, fmt.Errorf("topics: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("topics: line %d: only one YAML document is allowed", extra.Line)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("topics: %w", err)
	}
	v := &topicsValidator{loc: newLocator(&root)}
	specs := v.build(f)
	if err := errors.Join(v.errs...); err != nil {
		return nil, fmt.Errorf("topics: %w", err)
	}
	return specs, nil
}

// topicsValidator collects positioned errors while building specs.
type topicsValidator struct {
	loc  locator
	errs []error
}

// errorf records an error at line (0: no line known).
func (v *topicsValidator) errorf(line int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg = fmt.Sprintf("line %d: %s", line, msg)
	}
	v.errs = append(v.errs, errors.New(msg))
}

// build validates the file and merges defaults into each topic.
func (v *topicsValidator) build(f topicsFile) []TopicSpec {
	defaults := v.loc.section("defaults")
	v.checkCounts("defaults", defaults, f.Defaults)
	v.checkConfigs("defaults", defaults, f.Defaults.Configs)
	if f.Defaults.Name != "" {
		v.errorf(v.loc.keyLine(defaults, "name"), "defaults: name is not allowed here")
	}
	if len(f.Topics) == 0 {
		v.errorf(v.loc.keyLine(v.loc.doc, "topics"), "no topics defined")
	}
	seen := map[string]int{}          // name -> line
	normalized := map[string]string{} // Kafka treats '.' and '_' alike
	specs := make([]TopicSpec, 0, len(f.Topics))
	for i, t := range f.Topics {
		node := v.loc.topic(i)
		what := fmt.Sprintf("topic %d", i+1)
		if t.Name != "" {
			what = fmt.Sprintf("topic %q", t.Name)
		}
		v.checkName(node, t.Name, seen, normalized)
		v.checkCounts(what, node, t)
		v.checkConfigs(what, node, t.Configs)
		specs = append(specs, v.merge(what, node, f.Defaults, t))
	}
	return specs
}

// topicName is Kafka's legal topic name.
var topicName = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

// checkName validates a topic name and its uniqueness.
func (v *topicsValidator) checkName(node *yaml.Node, name string, seen map[string]int, normalized map[string]string) {
	line := v.loc.keyLine(node, "name")
	switch {
	case name == "":
		v.errorf(line, "topic has no name")
		return
	case !topicName.MatchString(name) || name == "." || name == "..":
		v.errorf(line, "topic %q: name must be 1-249 characters of a-z, A-Z, 0-9, '.', '_', '-'", name)
		return
	}
	if prev, ok := seen[name]; ok {
		v.errorf(line, "topic %q: defined twice (first at line %d)", name, prev)
		return
	}
	seen[name] = line
	key := strings.ReplaceAll(name, ".", "_")
	if other, ok := normalized[key]; ok {
		v.errorf(line, "topic %q collides with %q: Kafka treats '.' and '_' as the same", name, other)
	}
	normalized[key] = name
}

// checkCounts validates explicitly set partitions and replication factor.
func (v *topicsValidator) checkCounts(what string, node *yaml.Node, t topicFields) {
	if t.Partitions != nil && *t.Partitions < 1 {
		v.errorf(v.loc.keyLine(node, "partitions"), "%s: partitions must be at least 1, got %d", what, *t.Partitions)
	}
	if rf := t.ReplicationFactor; rf != nil && *rf != -1 && *rf < 1 {
		v.errorf(v.loc.keyLine(node, "replicationFactor"),
			"%s: replicationFactor must be -1 (broker default) or at least 1, got %d", what, *rf)
	}
}

// checkConfigs validates config names and values.
func (v *topicsValidator) checkConfigs(what string, node *yaml.Node, cfgs map[string]string) {
	cfgNode := v.loc.value(node, "configs")
	for _, k := range sortedKeys(cfgs) {
		if err := checkTopicConfig(k, cfgs[k]); err != nil {
			v.errorf(v.loc.keyLine(cfgNode, k), "%s: configs: %v", what, err)
		}
	}
}

// merge builds a spec from the defaults and a topic's own settings.
func (v *topicsValidator) merge(what string, node *yaml.Node, d, t topicFields) TopicSpec {
	s := TopicSpec{Name: t.Name, ReplicationFactor: -1, Configs: map[string]string{}}
	switch {
	case t.Partitions != nil:
		s.Partitions = *t.Partitions
	case d.Partitions != nil:
		s.Partitions = *d.Partitions
	default:
		v.errorf(node.Line, "%s: partitions not set here or in defaults", what)
	}
	if t.ReplicationFactor != nil {
		s.ReplicationFactor = *t.ReplicationFactor
	} else if d.ReplicationFactor != nil {
		s.ReplicationFactor = *d.ReplicationFactor
	}
	for k, val := range d.Configs {
		s.Configs[k] = val
	}
	for k, val := range t.Configs {
		s.Configs[k] = val
	}
	return s
}

// locator finds the line of a key in the parsed document.
type locator struct {
	doc *yaml.Node // the top-level mapping (nil if none)
}

// newLocator takes the document node.
func newLocator(root *yaml.Node) locator {
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 && root.Content[0].Kind == yaml.MappingNode {
		return locator{doc: root.Content[0]}
	}
	return locator{}
}

// value returns the value node of key in mapping m, or nil.
func (l locator) value(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// keyLine returns the line of key in mapping m, else m's own line, else 0.
func (l locator) keyLine(m *yaml.Node, key string) int {
	if m == nil {
		return 0
	}
	if m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i].Line
			}
		}
	}
	return m.Line
}

// section returns a top-level value node.
func (l locator) section(key string) *yaml.Node { return l.value(l.doc, key) }

// topic returns the node of the i-th topic.
func (l locator) topic(i int) *yaml.Node {
	seq := l.section("topics")
	if seq == nil || seq.Kind != yaml.SequenceNode || i >= len(seq.Content) {
		return nil
	}
	return seq.Content[i]
}
