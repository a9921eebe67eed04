package console

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// pageNames are the templates, each templates/<name>.html with the layout.
func pageNames() []string {
	return []string{"login", "overview", "hosts", "host", "url", "control", "ack", "launches", "launch", "log", "error"}
}

// page is what every template gets.
type page struct {
	Title string
	// Nav marks the current section in the menu.
	Nav string
	// Actor and CanAct describe the session (empty on the login page).
	Actor  string
	CanAct bool
	CSRF   string
	Data   any
}

func parsePages() (map[string]*template.Template, error) {
	fm := template.FuncMap{
		"bytes":    humanBytes,
		"count":    humanCount,
		"ago":      ago,
		"when":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
		"millis":   func(d time.Duration) int64 { return d.Milliseconds() },
		"joinList": func(s []string) string { return strings.Join(s, ", ") },
	}
	out := map[string]*template.Template{}
	for _, n := range pageNames() {
		t, err := template.New("layout.html").Funcs(fm).ParseFS(templateFS, "templates/layout.html", "templates/"+n+".html")
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", n, err)
		}
		out[n] = t
	}
	return out, nil
}

// render executes a page into a buffer first, so a template error is a
// clean 500 rather than half a page.
func (c *Console) render(w http.ResponseWriter, _ *http.Request, status int, name string, p page) {
	var buf bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&buf, "layout.html", p); err != nil {
		c.log.Error("console: render page", "page", name, "err", err)
		http.Error(w, "console: page "+name+" failed to render (see the log)", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// show renders a page for a session.
func (c *Console) show(w http.ResponseWriter, r *http.Request, s *session, name, nav, title string, data any) {
	c.render(w, r, http.StatusOK, name, page{Title: title, Nav: nav, Actor: s.actor(), CanAct: s.canAct(), CSRF: s.csrf, Data: data})
}

// fail shows an error page with status.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, status int, msg string) {
	p := page{Title: http.StatusText(status), Data: msg}
	if s != nil {
		p.Actor, p.CanAct, p.CSRF = s.actor(), s.canAct(), s.csrf
	}
	c.render(w, r, status, "error", p)
}

// itoa is strconv.Itoa, short for the sentences it builds.
func itoa(n int) string { return strconv.Itoa(n) }

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func humanCount(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ago says how far t is from now, "-" for the zero time.
func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Until(t).Round(time.Second)
	if d >= 0 {
		return "in " + d.String()
	}
	return (-d).String() + " ago"
}
