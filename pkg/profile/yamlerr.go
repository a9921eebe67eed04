package profile

import (
	"errors"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/trawler-crawl/trawler/internal/editdist"
)

// yaml's type errors say where, not what: "line 2: cannot unmarshal
// !!str `ten` into int64", "line 2: field minDelayMS not found in type
// profile.Politeness". namedError rewrites them to name the setting's
// dotted key, which is what an operator looks for (and all there is for a
// --set, whose document has no lines of the operator's).
var (
	yamlLine     = regexp.MustCompile(`^line (\d+): (.*)$`)
	yamlTypeErr  = regexp.MustCompile("^cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")
	yamlFieldErr = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)
)

// truncatedYAML ends a value yaml cut short in a message.
const truncatedYAML = "..."

// namedError returns err with each of yaml's type errors about src named
// by the key of the setting it is about, keeping "line N: " in front when
// withLines. Errors of other kinds, and messages it cannot place, are
// returned as they are.
func namedError(err error, src []byte, withLines bool) error {
	// Only yaml's own: a section's UnmarshalYAML that wraps one (scope
	// rules) has named the setting already.
	te, ok := err.(*yaml.TypeError)
	if !ok {
		return err
	}
	var root yaml.Node
	if yaml.Unmarshal(src, &root) != nil {
		return err
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, m := range te.Errors {
		msgs = append(msgs, nameMessage(&root, m, withLines))
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// nameMessage rewrites one "line N: ..." message of yaml's.
func nameMessage(root *yaml.Node, msg string, withLines bool) string {
	lm := yamlLine.FindStringSubmatch(msg)
	if lm == nil {
		return msg
	}
	line, _ := strconv.Atoi(lm[1])
	text := lm[2]
	prefix := ""
	if withLines {
		prefix = "line " + lm[1] + ": "
	}
	if m := yamlFieldErr.FindStringSubmatch(text); m != nil {
		path, ok := findKey(root, line, m[1])
		if !ok {
			return msg
		}
		out := prefix + joinPath(path) + ": no such setting"
		if near := nearestKey(path[:len(path)-1], m[1]); near != "" {
			out += " (did you mean " + joinPath(append(path[:len(path)-1:len(path)-1], near)) + "?)"
		}
		return out
	}
	if m := yamlTypeErr.FindStringSubmatch(text); m != nil {
		path, v := findValue(root, line, m[1], m[2])
		if v == nil || len(path) == 0 {
			return msg
		}
		want := typeWords(m[3])
		switch v.Kind {
		case yaml.SequenceNode:
			return prefix + joinPath(path) + ": want " + want + ", got a list"
		case yaml.MappingNode:
			return prefix + joinPath(path) + ": want " + want + ", got a mapping"
		}
		return prefix + joinPath(path) + ": " + strconv.Quote(v.Value) + " is not " + want
	}
	return msg
}

// typeWords names a Go type as an operator would read it.
func typeWords(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["), strings.Contains(goType, "."):
		return "a mapping (a section)"
	}
	return "a " + goType
}

// keyPath is the way from the document's root to a node: mapping keys,
// and "[i]" for sequence items.
type keyPath []string

func joinPath(p keyPath) string {
	var b strings.Builder
	for i, s := range p {
		if i > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// walk calls visit for each mapping entry and sequence item under n, with
// its path.
func walk(n *yaml.Node, path keyPath, visit func(path keyPath, key, value *yaml.Node) bool) bool {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if walk(c, path, visit) {
				return true
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := append(path[:len(path):len(path)], k.Value)
			if visit(p, k, v) || walk(v, p, visit) {
				return true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := append(path[:len(path):len(path)], "["+strconv.Itoa(i)+"]")
			if visit(p, nil, c) || walk(c, p, visit) {
				return true
			}
		}
	}
	return false
}

// findKey finds the mapping key name on line.
func findKey(root *yaml.Node, line int, name string) (keyPath, bool) {
	var found keyPath
	walk(root, nil, func(p keyPath, k, _ *yaml.Node) bool {
		if k != nil && k.Line == line && k.Value == name {
			found = p
			return true
		}
		return false
	})
	return found, found != nil
}

// findValue finds the value on line that yaml quoted in a type error: a
// scalar with that text (or, cut with "...", that beginning), or a
// sequence or mapping. It returns its path and node, nil if none.
func findValue(root *yaml.Node, line int, tag, quoted string) (keyPath, *yaml.Node) {
	var path keyPath
	var found *yaml.Node
	walk(root, nil, func(p keyPath, _, v *yaml.Node) bool {
		if v.Line != line {
			return false
		}
		var ok bool
		switch tag {
		case "!!seq":
			ok = v.Kind == yaml.SequenceNode
		case "!!map":
			ok = v.Kind == yaml.MappingNode
		default:
			head, cut := strings.CutSuffix(quoted, truncatedYAML)
			ok = v.Kind == yaml.ScalarNode && (v.Value == quoted || cut && strings.HasPrefix(v.Value, head))
		}
		if ok {
			path, found = p, v
		}
		return ok
	})
	return path, found
}

// nearestKey suggests the real setting under section (a path of the
// profile) that name is a typo of: the same but for case, or at most two
// edits away. "" when there is none or the section is not a struct.
func nearestKey(section keyPath, name string) string {
	t := reflect.TypeOf(Profile{})
	for _, part := range section {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice && strings.HasPrefix(part, "[") {
			t = t.Elem()
		}
		if strings.HasPrefix(part, "[") {
			continue
		}
		f, ok := fieldByTag(t, part)
		if !ok {
			return ""
		}
		t = f.Type
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	best, bestD := "", 3
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		if strings.EqualFold(tag, name) {
			return tag
		}
		if d := editdist.Distance(strings.ToLower(tag), strings.ToLower(name)); d < bestD {
			best, bestD = tag, d
		}
	}
	return best
}
