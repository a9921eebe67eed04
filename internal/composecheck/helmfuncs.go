package composecheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"
)

// chartFuncs implements the Helm (sprig) functions the chart uses, with
// Helm's argument order and results. t is the chart's template set, which
// include executes named templates from.
func chartFuncs(t *template.Template) template.FuncMap {
	return template.FuncMap{
		"include": func(name string, data any) (string, error) {
			var buf bytes.Buffer
			if err := t.ExecuteTemplate(&buf, name, data); err != nil {
				return "", err
			}
			return buf.String(), nil
		},
		"toYaml":     toYAML,
		"indent":     indent,
		"nindent":    func(n int, s string) string { return "\n" + indent(n, s) },
		"quote":      quote,
		"default":    defaultValue,
		"required":   required,
		"contains":   func(substr, s string) bool { return strings.Contains(s, substr) },
		"trunc":      trunc,
		"trimSuffix": func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
		"list":       func(v ...any) []any { return v },
		"upper":      strings.ToUpper,
		"int":        toInt,
		// until is sprig's: 0, 1, ..., n-1.
		"until": func(n int) []int {
			out := make([]int, 0, max(n, 0))
			for i := range n {
				out = append(out, i)
			}
			return out
		},
		"sha256sum": func(s string) string {
			sum := sha256.Sum256([]byte(s))
			return hex.EncodeToString(sum[:])
		},
	}
}

// toYAML renders v as YAML without the final newline, as Helm's toYaml
// does, with two-space indentation.
func toYAML(v any) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("toYaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("toYaml: %w", err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// toInt is sprig's int for the numbers values hold: YAML integers here,
// float64 (JSON numbers) or int64 (--set) under the real helm.
func toInt(v any) (int, error) {
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case uint64:
		return int(n), nil
	case float64:
		return int(n), nil
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("int: %v (%T) is not a number", v, v)
}

// indent prefixes every line of s with n spaces.
func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// quote double-quotes each non-nil argument and joins them with spaces.
func quote(args ...any) string {
	var out []string
	for _, a := range args {
		if a != nil {
			out = append(out, fmt.Sprintf("%q", fmt.Sprint(a)))
		}
	}
	return strings.Join(out, " ")
}

// defaultValue returns given unless it is missing or empty, else def.
func defaultValue(def any, given ...any) any {
	if len(given) == 0 || isEmpty(given[0]) {
		return def
	}
	return given[0]
}

// required fails rendering with msg when v is missing or empty.
func required(msg string, v any) (any, error) {
	if isEmpty(v) {
		return nil, errors.New(msg)
	}
	return v, nil
}

// trunc cuts s to at most n bytes.
func trunc(n int, s string) string {
	if n >= 0 && len(s) > n {
		return s[:n]
	}
	return s
}

// isEmpty is sprig's notion of empty: nil, zero numbers, false, and empty
// strings, maps and slices.
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String, reflect.Map, reflect.Slice, reflect.Array:
		return rv.Len() == 0
	case reflect.Bool:
		return !rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return rv.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() == 0
	case reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// CheckBraces reports the first unbalanced template delimiter in src: a
// "{{" opened inside another action, a "}}" with no action open, or an
// action still open at the end. Text inside quoted strings, raw strings
// and comments within an action is skipped. name prefixes the error,
// which gives the line and column.
func CheckBraces(name, src string) error {
	line, col := 1, 1
	openLine, openCol := 0, 0
	inAction := false
	for i := 0; i < len(src); {
		switch {
		case !inAction && strings.HasPrefix(src[i:], "}}"):
			return fmt.Errorf("%s:%d:%d: \"}}\" closes no action", name, line, col)
		case strings.HasPrefix(src[i:], "{{"):
			if inAction {
				return fmt.Errorf("%s:%d:%d: \"{{\" inside the action opened at %d:%d", name, line, col, openLine, openCol)
			}
			inAction, openLine, openCol = true, line, col
			i, line, col = advance(src, i, 2, line, col)
			continue
		case inAction && strings.HasPrefix(src[i:], "}}"):
			inAction = false
			i, line, col = advance(src, i, 2, line, col)
			continue
		case inAction && (src[i] == '"' || src[i] == '`' || src[i] == '\''):
			n, err := quotedLen(src[i:])
			if err != nil {
				return fmt.Errorf("%s:%d:%d: %w", name, line, col, err)
			}
			i, line, col = advance(src, i, n, line, col)
			continue
		case inAction && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return fmt.Errorf("%s:%d:%d: comment is not closed", name, line, col)
			}
			i, line, col = advance(src, i, end+4, line, col)
			continue
		}
		i, line, col = advance(src, i, 1, line, col)
	}
	if inAction {
		return fmt.Errorf("%s:%d:%d: action is not closed with \"}}\"", name, openLine, openCol)
	}
	return nil
}

// advance moves n bytes forward from i, keeping line and column.
func advance(src string, i, n, line, col int) (int, int, int) {
	for _, c := range []byte(src[i : i+n]) {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return i + n, line, col
}

// quotedLen returns the length of the string or character literal at the
// start of s, including its quotes. Interpreted strings and characters end
// at the line's end at the latest, as in Go.
func quotedLen(s string) (int, error) {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q != '`' && s[i] == '\\':
			i++
		case q != '`' && s[i] == '\n':
			return 0, fmt.Errorf("string literal %c...%c is not closed on its line", q, q)
		case s[i] == q:
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("string literal %c...%c is not closed", q, q)
}
