package launcher

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Depth is how deep a target is crawled (W3ACT "depth").
type Depth string

// Depths W3ACT sends. An absent or empty depth means DepthCapped.
const (
	DepthCapped      Depth = "CAPPED"
	DepthCappedLarge Depth = "CAPPED_LARGE"
	DepthDeep        Depth = "DEEP"
)

// Scope is how far from its seeds a target's crawl may go (W3ACT "scope").
type Scope string

// Scopes W3ACT sends. An absent or empty scope means ScopeRoot.
const (
	ScopeResource   Scope = "resource"
	ScopePlus1      Scope = "plus1"
	ScopeRoot       Scope = "root"
	ScopeSubdomains Scope = "subdomains"
)

// Frequency is how often a schedule asks for a target to be crawled.
type Frequency string

// Frequencies W3ACT sends; any other value makes the feed line bad.
const (
	Daily       Frequency = "DAILY"
	Weekly      Frequency = "WEEKLY"
	Monthly     Frequency = "MONTHLY"
	Quarterly   Frequency = "QUARTERLY"
	SixMonthly  Frequency = "SIXMONTHLY"
	Annual      Frequency = "ANNUAL"
	DomainCrawl Frequency = "DOMAINCRAWL"
	NeverCrawl  Frequency = "NEVERCRAWL"
)

// Known reports whether f is one of the frequencies W3ACT sends.
func (f Frequency) Known() bool {
	switch f {
	case Daily, Weekly, Monthly, Quarterly, SixMonthly, Annual, DomainCrawl, NeverCrawl:
		return true
	}
	return false
}

// feedDateLayout is the date form W3ACT writes, a wall-clock time in the
// feed's time zone.
const feedDateLayout = "2006-01-02 15:04:05"

// Target is one valid line of a crawl feed.
type Target struct {
	ID                int64
	Title             string
	Seeds             []string // valid http(s) URLs only, in feed order
	Depth             Depth
	Scope             Scope
	IgnoreRobotsTxt   bool
	Schedules         []Schedule
	Watched           bool
	DocumentURLScheme string
	LoginPageURL      string
	LogoutURL         string
	SecretID          SecretID
	// WebRender is the optional feed field "webrender": render the seeds
	// in a browser.
	WebRender bool

	// Source and Line say where the target was read, for log messages.
	Source string
	Line   int
}

// Schedule is one crawl schedule of a target.
type Schedule struct {
	StartDate FeedTime // zero: none
	EndDate   FeedTime // zero: open-ended
	Frequency Frequency
}

// FeedTime is a schedule date. W3ACT writes wall-clock times without a zone,
// meant in the feed's time zone, which is only known when a schedule is
// evaluated; legacy feeds write epoch milliseconds, which are instants.
// FeedTime keeps which of the two it holds. The zero value means "no date".
type FeedTime struct {
	t       time.Time // wall-clock fields in UTC, or the instant
	set     bool
	instant bool
}

// WallTime returns a FeedTime for a wall-clock time (year to second of t,
// ignoring t's location) that is placed in a time zone by In.
func WallTime(t time.Time) FeedTime {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return FeedTime{t: time.Date(y, mo, d, h, mi, s, 0, time.UTC), set: true}
}

// Instant returns a FeedTime for an absolute instant.
func Instant(t time.Time) FeedTime { return FeedTime{t: t.UTC(), set: true, instant: true} }

// IsZero reports whether the date is absent.
func (f FeedTime) IsZero() bool { return !f.set }

// In returns the date as an instant, reading a wall-clock time in loc (UTC
// if loc is nil). It returns the zero time.Time for an absent date.
func (f FeedTime) In(loc *time.Location) time.Time {
	switch {
	case !f.set:
		return time.Time{}
	case f.instant:
		return f.t
	case loc == nil:
		loc = time.UTC
	}
	y, mo, d := f.t.Date()
	h, mi, s := f.t.Clock()
	return time.Date(y, mo, d, h, mi, s, 0, loc)
}

// wall returns a time whose date and clock fields are the date as read on
// loc's clock: the feed's own fields for a wall-clock time (even one that
// falls in a daylight-saving gap), the instant seen in loc for a legacy
// instant. Only its fields are meaningful, not the instant.
func (f FeedTime) wall(loc *time.Location) time.Time {
	if f.instant {
		if loc == nil {
			loc = time.UTC
		}
		return f.t.In(loc)
	}
	return f.t
}

// String returns the feed form of a wall-clock time, RFC 3339 for an
// instant, and "" for an absent date.
func (f FeedTime) String() string {
	switch {
	case !f.set:
		return ""
	case f.instant:
		return f.t.Format(time.RFC3339)
	}
	return f.t.Format(feedDateLayout)
}

// SecretID refers to stored login credentials for a target. It prints as
// "[redacted]" through fmt, log/slog and encoding/json so that it never
// reaches logs or error messages; Reveal returns the value.
type SecretID string

const redacted = "[redacted]"

// Reveal returns the secret id itself, for the component that looks up
// credentials.
func (s SecretID) Reveal() string { return string(s) }

// String returns "[redacted]", or "" when there is no secret id.
func (s SecretID) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString redacts the value for %#v.
func (s SecretID) GoString() string { return strconv.Quote(s.String()) }

// LogValue redacts the value for log/slog.
func (s SecretID) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON redacts the value, so a JSON log handler cannot leak it.
func (s SecretID) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// wireTarget is a feed line before validation. Every field is kept raw so
// that type errors can be reported per field, and fields that legacy feeds
// write with another type (dates, secretId) can be accepted.
type wireTarget struct {
	ID                json.RawMessage `json:"id"`
	Title             json.RawMessage `json:"title"`
	Seeds             json.RawMessage `json:"seeds"`
	Depth             json.RawMessage `json:"depth"`
	Scope             json.RawMessage `json:"scope"`
	IgnoreRobotsTxt   json.RawMessage `json:"ignoreRobotsTxt"`
	Schedules         json.RawMessage `json:"schedules"`
	Watched           json.RawMessage `json:"watched"`
	DocumentURLScheme json.RawMessage `json:"documentUrlScheme"`
	LoginPageURL      json.RawMessage `json:"loginPageUrl"`
	LogoutURL         json.RawMessage `json:"logoutUrl"`
	SecretID          json.RawMessage `json:"secretId"`
	WebRender         json.RawMessage `json:"webrender"`
}

type wireSchedule struct {
	StartDate json.RawMessage `json:"startDate"`
	EndDate   json.RawMessage `json:"endDate"`
	Frequency json.RawMessage `json:"frequency"`
}

// problems collects the reasons a line is bad, so one error can name every
// broken field at once.
type problems []string

func (p *problems) add(field string, err error) {
	if err != nil {
		*p = append(*p, field+": "+err.Error())
	}
}

// parseTarget validates one non-blank feed line. It returns the target and
// a warning for each seed it dropped, or the reason the line is bad. No
// returned text ever contains the secretId value.
func parseTarget(line []byte) (Target, []string, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Target{}, nil, errors.New("blank line")
	}
	if err := checkObject(line); err != nil {
		return Target{}, nil, err
	}
	var w wireTarget
	if err := json.Unmarshal(line, &w); err != nil {
		return Target{}, nil, jsonReason(err)
	}
	var t Target
	var p problems
	var err error
	if isNull(w.ID) {
		p = append(p, "id: missing")
	} else {
		t.ID, err = decodeInt(w.ID)
		p.add("id", err)
	}
	t.Title, err = decodeString(w.Title)
	p.add("title", err)
	seeds, warnings, err := decodeSeeds(w.Seeds)
	p.add("seeds", err)
	t.Seeds = seeds
	p.add("depth", decodeEnum(w.Depth, &t.Depth, DepthCapped, DepthCapped, DepthCappedLarge, DepthDeep))
	p.add("scope", decodeEnum(w.Scope, &t.Scope, ScopeRoot, ScopeResource, ScopePlus1, ScopeRoot, ScopeSubdomains))
	t.IgnoreRobotsTxt, err = decodeBool(w.IgnoreRobotsTxt)
	p.add("ignoreRobotsTxt", err)
	t.Watched, err = decodeBool(w.Watched)
	p.add("watched", err)
	t.WebRender, err = decodeBool(w.WebRender)
	p.add("webrender", err)
	t.DocumentURLScheme, err = decodeString(w.DocumentURLScheme)
	p.add("documentUrlScheme", err)
	t.LoginPageURL, err = decodeString(w.LoginPageURL)
	p.add("loginPageUrl", err)
	t.LogoutURL, err = decodeString(w.LogoutURL)
	p.add("logoutUrl", err)
	t.SecretID, err = decodeSecretID(w.SecretID)
	p.add("secretId", err)
	t.Schedules, err = decodeSchedules(w.Schedules, &p)
	p.add("schedules", err)
	if len(p) > 0 {
		return Target{}, warnings, errors.New(strings.Join(p, "; "))
	}
	return t, warnings, nil
}

// checkObject rejects lines that are not a JSON object, with a reason that
// says what the line is instead. Lines starting with '{' are left to the
// decoder, which checks their syntax anyway.
func checkObject(line []byte) error {
	if line[0] == '{' {
		return nil
	}
	if json.Valid(line) {
		return fmt.Errorf("want a JSON object, got %s", jsonKind(line))
	}
	// Go's message for text that is not JSON at all reads oddly
	// ("invalid character 'o' in literal null"); say it plainly.
	return fmt.Errorf("invalid JSON: not an object (starts with %q)", rune(line[0]))
}

// jsonReason describes a decoding error without quoting the input, since
// the input may hold a secretId.
func jsonReason(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("invalid JSON: %s (at byte %d)", strings.TrimPrefix(syn.Error(), "json: "), syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("invalid JSON: field %s has type %s", typ.Field, typ.Value)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// jsonKind names the JSON type of a valid value from its first byte.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "list"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func wrongType(want string, raw json.RawMessage) error {
	return fmt.Errorf("want %s, got %s", want, jsonKind(raw))
}

func decodeInt(raw json.RawMessage) (int64, error) {
	if jsonKind(raw) != "number" {
		return 0, wrongType("a number", raw)
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		return 0, errors.New("want a whole number")
	}
	return n, nil
}

// decodeString accepts a string or null (read as "").
func decodeString(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	if jsonKind(raw) != "string" {
		return "", wrongType("a string", raw)
	}
	// Most feed strings need no unescaping; the line is valid JSON, so
	// the bytes between the quotes are the string.
	if len(raw) >= 2 && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", wrongType("a string", raw)
	}
	return s, nil
}

// decodeBool accepts a boolean or null (read as false).
func decodeBool(raw json.RawMessage) (bool, error) {
	if isNull(raw) {
		return false, nil
	}
	// The line is valid JSON, so a boolean is exactly true or false.
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, wrongType("a boolean", raw)
}

// decodeEnum reads a string that must be one of allowed; null or "" gives
// def.
func decodeEnum[T ~string](raw json.RawMessage, dst *T, def T, allowed ...T) error {
	s, err := decodeString(raw)
	if err != nil {
		return err
	}
	if s == "" {
		*dst = def
		return nil
	}
	for _, a := range allowed {
		if T(s) == a {
			*dst = a
			return nil
		}
	}
	return fmt.Errorf("unknown value %s", quoteShort(s))
}

// decodeSecretID accepts a string, a number (legacy feeds) or null. Its
// errors never include the value.
func decodeSecretID(raw json.RawMessage) (SecretID, error) {
	switch jsonKind(raw) {
	case "null", "nothing":
		return "", nil
	case "number":
		return SecretID(bytes.TrimSpace(raw)), nil
	case "string":
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return SecretID(s), nil
		}
	}
	return "", errors.New("want a string or number")
}

// decodeSeeds reads the seed list. Seeds that are not valid http(s) URLs
// are dropped with a warning; a list with no valid seed is an error.
func decodeSeeds(raw json.RawMessage) ([]string, []string, error) {
	if isNull(raw) {
		return nil, nil, errors.New("missing")
	}
	if jsonKind(raw) != "list" {
		return nil, nil, wrongType("a list of URLs", raw)
	}
	// Fast path: a list of strings (or nulls) decodes in one pass.
	var strs []string
	if json.Unmarshal(raw, &strs) == nil {
		return checkSeeds(strs)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, wrongType("a list of URLs", raw)
	}
	var seeds, warnings []string
	for i, item := range items {
		s, err := decodeString(item)
		if err == nil {
			err = checkSeed(s)
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("seed %d dropped: %v", i+1, err))
			continue
		}
		seeds = append(seeds, strings.TrimSpace(s))
	}
	if len(seeds) == 0 {
		return nil, warnings, fmt.Errorf("no valid seed among %d", len(items))
	}
	return seeds, warnings, nil
}

// checkSeeds keeps the valid seeds of a list of strings.
func checkSeeds(strs []string) ([]string, []string, error) {
	seeds := make([]string, 0, len(strs))
	var warnings []string
	for i, s := range strs {
		if err := checkSeed(s); err != nil {
			warnings = append(warnings, fmt.Sprintf("seed %d dropped: %v", i+1, err))
			continue
		}
		seeds = append(seeds, strings.TrimSpace(s))
	}
	if len(seeds) == 0 {
		return nil, warnings, fmt.Errorf("no valid seed among %d", len(strs))
	}
	return seeds, warnings, nil
}

// checkSeed accepts absolute http and https URLs with a host.
func checkSeed(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return errors.New("empty URL")
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%s is not a valid URL", quoteShort(s))
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return fmt.Errorf("%s is not an http(s) URL", quoteShort(s))
	}
	if u.Hostname() == "" || strings.ContainsAny(u.Host, " \t") {
		return fmt.Errorf("%s has no valid host", quoteShort(s))
	}
	return nil
}

// decodeSchedules reads the schedule list; problems inside schedules are
// added to p with their index, so the returned error is only about the list
// itself.
func decodeSchedules(raw json.RawMessage, p *problems) ([]Schedule, error) {
	if isNull(raw) {
		return nil, nil
	}
	if jsonKind(raw) != "list" {
		return nil, wrongType("a list", raw)
	}
	// Fast path: a list of objects decodes in one pass; anything else is
	// taken apart item by item to say which item is wrong.
	var ws []*wireSchedule
	if json.Unmarshal(raw, &ws) == nil && !slices.Contains(ws, nil) {
		out := make([]Schedule, 0, len(ws))
		for i, w := range ws {
			out = append(out, decodeSchedule(*w, "schedules["+strconv.Itoa(i)+"]", p))
		}
		return out, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, wrongType("a list", raw)
	}
	out := make([]Schedule, 0, len(items))
	for i, item := range items {
		field := fmt.Sprintf("schedules[%d]", i)
		var w wireSchedule
		if jsonKind(item) != "object" || json.Unmarshal(item, &w) != nil {
			p.add(field, wrongType("an object", item))
			continue
		}
		out = append(out, decodeSchedule(w, field, p))
	}
	return out, nil
}

// decodeSchedule validates one schedule object; field names it in problems.
func decodeSchedule(w wireSchedule, field string, p *problems) Schedule {
	var s Schedule
	var err error
	s.StartDate, err = decodeDate(w.StartDate)
	p.add(field+".startDate", err)
	s.EndDate, err = decodeDate(w.EndDate)
	p.add(field+".endDate", err)
	p.add(field+".frequency", decodeFrequency(w.Frequency, &s.Frequency))
	return s
}

func decodeFrequency(raw json.RawMessage, dst *Frequency) error {
	s, err := decodeString(raw)
	switch {
	case err != nil:
		return err
	case s == "":
		return errors.New("missing")
	case !Frequency(s).Known():
		return fmt.Errorf("unknown frequency %s", quoteShort(s))
	}
	*dst = Frequency(s)
	return nil
}

// decodeDate reads "YYYY-MM-DD HH:MM:SS", "" or null (no date), or a legacy
// epoch-millisecond number.
func decodeDate(raw json.RawMessage) (FeedTime, error) {
	if jsonKind(raw) == "number" {
		ms, err := decodeInt(raw)
		if err != nil {
			return FeedTime{}, errors.New("want epoch milliseconds as a whole number")
		}
		return Instant(time.UnixMilli(ms)), nil
	}
	s, err := decodeString(raw)
	if err != nil {
		return FeedTime{}, wrongType(`a "YYYY-MM-DD HH:MM:SS" string or epoch milliseconds`, raw)
	}
	if s == "" {
		return FeedTime{}, nil
	}
	t, err := time.Parse(feedDateLayout, s)
	if err != nil {
		return FeedTime{}, fmt.Errorf(`want "YYYY-MM-DD HH:MM:SS", got %s`, quoteShort(s))
	}
	return WallTime(t), nil
}

// quoteShort quotes a feed value for a message, cut to keep log lines sane.
func quoteShort(s string) string {
	const limit = 120
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return strconv.Quote(s)
}
