package worker

import "strings"

// jsBase is the URL a script's (or JSON document's) guessed links resolve
// against: the page that loaded it, as Heritrix's ExtractorJS resolves a
// script file's strings (addRelativeToVia), because a script runs in that
// page and the browser resolves the paths it builds against the page, not
// against the script. A Sphinx site shows why: search.html loads
// _static/glossary.json, whose links ("library/os.html") are relative to
// search.html; resolved against the JSON file they were 30-odd 404s under
// /_static/. Without an http(s) via (a seed, a prerequisite) the script's
// own URL is the base.
func jsBase(t *task) string {
	if v := t.l.ParentURL; strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
		return v
	}
	return t.l.URL
}
