// Package console is the operator console: HTML pages over the crawl that
// the admin API (pkg/admin/api) serves as JSON, mounted beside it on the
// admin listener under /console/ (admin.Server.MountConsole). It reads and
// acts through the API's own Go functions (api.StatusReader, the
// explainer, api.SendControl, the acknowledgements, harvest statistics),
// so the two never disagree.
//
// Access: a person logs in with the operator or read-only admin token and
// gets a server-side session (an HttpOnly, SameSite=Strict cookie, Secure
// over TLS); every POST carries the session's CSRF token; the read-only
// token's sessions see everything and act on nothing. Pages are
// html/template (crawled URLs are hostile input) under a Content Security
// Policy that allows no inline script: the little JavaScript there is
// (live numbers, sparklines) is an embedded static file.
package console

import (
	"embed"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/identity"
	"github.com/trawler-crawl/trawler/pkg/robots"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the console is served (admin.ConsolePrefix).
const Prefix = admin.ConsolePrefix

// Config is what an operator sets.
type Config struct {
	// WaybackURL is the replay link of a capture: {timestamp} (14 digits)
	// and {url} are replaced, e.g.
	// "http://localhost:8080/wayback/{timestamp}/{url}"; empty: captures
	// are listed without replay links.
	WaybackURL string
	// SessionTTL is how long a login lasts; 0: 12 hours.
	SessionTTL time.Duration
	// SecureCookie sets the cookie's Secure attribute on plain-HTTP
	// requests too (behind a proxy that terminates TLS); requests that
	// arrive over TLS always get it.
	SecureCookie bool
}

// RegisterFlags registers the console's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.WaybackURL, "wayback-url", "", "replay link of a capture in the operator console (/console/): {timestamp} and {url} are replaced, "+
		"e.g. 'http://localhost:8080/wayback/{timestamp}/{url}' (empty: no replay links)")
	fs.DurationVar(&c.SessionTTL, "console-session-ttl", 12*time.Hour, "how long an operator console login lasts")
	fs.BoolVar(&c.SecureCookie, "console-secure-cookie", false, "mark the console's session cookie Secure on plain HTTP too (behind a proxy that terminates TLS)")
}

// Validate checks the wayback template and the session time.
func (c Config) Validate() error {
	if c.SessionTTL < 0 {
		return fmt.Errorf("console session ttl %v is negative", c.SessionTTL)
	}
	if c.WaybackURL == "" {
		return nil
	}
	if !strings.Contains(c.WaybackURL, "{url}") {
		return fmt.Errorf("wayback-url %q: has no {url} to replace", c.WaybackURL)
	}
	u, err := url.Parse(strings.NewReplacer("{url}", "u", "{timestamp}", "20060102150405").Replace(c.WaybackURL))
	if err != nil {
		return fmt.Errorf("wayback-url %q: %w", c.WaybackURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("wayback-url %q: want an absolute http(s) URL", c.WaybackURL)
	}
	return nil
}

// Deps are what the console reads and drives.
type Deps struct {
	// API is what the admin API is built from (api.BuildDeps): the
	// frontier, explainer, control producer, acknowledgements and harvest
	// statistics. A nil part leaves its pages saying it is not available.
	API api.Deps
	// Tokens open sessions: the operator's acts, the read-only one reads.
	Tokens admin.Tokens
	// Redis holds the identity leases (workers and renderers alive) and
	// the robots.txt cache; nil: not shown.
	Redis redis.UniversalClient
	// Gatherer is this process's metrics: WARC files and bytes, CDX lag,
	// dead-letter records; nil: not shown.
	Gatherer prometheus.Gatherer
	// InProcess are roles this process runs without an identity lease
	// (a standalone's worker and renderer), counted alive with the
	// leased ones by their Kind, "worker" or "renderer".
	InProcess []identity.Holder
	// Files are where this process's crawl.log, reports and WARCs are.
	Files Files
	// Replay reads captures back from the archive, for the titles of a
	// URL's captures; nil: no titles.
	Replay Replayer
	// Logger records logins and actions (never a token); nil discards.
	Logger *slog.Logger
	// Now is the clock of sessions; nil: time.Now.
	Now func() time.Time
}

// Files locate what the console reads from disk; an empty field hides
// what it would show.
type Files struct {
	// DataDir is the data directory, whose filesystem's free space the
	// overview shows.
	DataDir string
	// LogDir holds crawl.log, or one directory per worker identity each
	// with its crawl.log.
	LogDir string
	// ReportsDir holds the Heritrix-style reports of the last run.
	ReportsDir string
	// MetadataDir holds the launches' metadata WARCs (the provenance
	// role's).
	MetadataDir string
}

// Console serves the pages; it is an http.Handler for Prefix.
type Console struct {
	cfg      Config
	d        Deps
	log      *slog.Logger
	now      func() time.Time
	sessions *sessions
	status   *api.StatusReader
	queues   *queueList
	robots   *robots.Cache
	pages    map[string]*template.Template
	mux      *http.ServeMux
	recent   *recentActions
}

// New builds the console. Validate cfg first.
func New(cfg Config, d Deps) (*Console, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !d.Tokens.Configured() {
		return nil, errors.New("console: no admin token to log in with")
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	c := &Console{cfg: cfg, d: d, log: d.Logger, now: d.Now, status: api.NewStatusReader(d.API), recent: newRecentActions(50)}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.sessions = newSessions(cfg.SessionTTL, c.now)
	if d.API.Frontier != nil {
		c.queues = newQueueList(d.API.Frontier)
	}
	if d.Redis != nil && d.API.Frontier != nil {
		// The worker's robots cache (pkg/explain uses the same prefix).
		rc, err := robots.NewCache(d.Redis, "trawler:"+d.API.Frontier.Name()+":robots:", robots.CacheOptions{})
		if err != nil {
			return nil, fmt.Errorf("console: %w", err)
		}
		c.robots = rc
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c.pages = pages
	c.routes()
	return c, nil
}

func (c *Console) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	m.Handle("GET "+Prefix+"static/", http.StripPrefix(Prefix+"static/", http.FileServerFS(static)))
	m.HandleFunc("GET "+Prefix+"login", c.loginPage)
	m.HandleFunc("POST "+Prefix+"login", c.login)
	m.Handle("POST "+Prefix+"logout", c.act(c.logout, false))
	m.Handle("GET "+Prefix+"{$}", c.read(c.overview))
	m.Handle("GET "+Prefix+"live.json", c.read(c.liveJSON))
	m.Handle("GET "+Prefix+"hosts", c.read(c.hosts))
	m.Handle("GET "+Prefix+"host", c.read(c.host))
	m.Handle("GET "+Prefix+"url", c.read(c.urlPage))
	m.Handle("GET "+Prefix+"control", c.read(c.controlPage))
	m.Handle("POST "+Prefix+"control", c.act(c.control, true))
	m.Handle("GET "+Prefix+"ack", c.read(c.ackPage))
	m.Handle("GET "+Prefix+"ack.json", c.read(c.ackJSON))
	m.Handle("GET "+Prefix+"launches", c.read(c.launches))
	m.Handle("GET "+Prefix+"launch", c.read(c.launch))
	m.Handle("GET "+Prefix+"reports/{name}", c.read(c.report))
	m.Handle("GET "+Prefix+"log", c.read(c.crawlLog))
	m.Handle(Prefix, c.read(func(w http.ResponseWriter, r *http.Request, s *session) {
		c.fail(w, r, s, http.StatusNotFound, "no console page "+r.URL.Path)
	}))
	c.mux = m
}

// ServeHTTP serves the console with its security headers on every answer.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// No inline script or style, nothing from elsewhere, no framing: a
	// crawled URL that slipped through escaping still could not run.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}
