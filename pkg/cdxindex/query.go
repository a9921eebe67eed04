package cdxindex

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/surt"
)

// defaultFields is OutbackCDX's default fl: the CDX11 fields.
var defaultFields = []string{"urlkey", "timestamp", "url", "mime", "status", "digest",
	"redirecturl", "robotflags", "length", "offset", "filename"}

const (
	minTimestamp int64 = 0
	maxTimestamp int64 = 99999999999999
)

type matchType int

const (
	matchDefault matchType = iota
	matchExact
	matchPrefix
	matchHost
	matchDomain
	matchRange
)

var matchTypes = map[string]matchType{"DEFAULT": matchDefault, "EXACT": matchExact,
	"PREFIX": matchPrefix, "HOST": matchHost, "DOMAIN": matchDomain, "RANGE": matchRange}

type sortOrder int

const (
	sortDefault sortOrder = iota
	sortClosest
	sortReverse
)

var sortOrders = map[string]sortOrder{"DEFAULT": sortDefault, "CLOSEST": sortClosest, "REVERSE": sortReverse}

// query is a parsed CDX server query (OutbackCDX's Query class).
type query struct {
	url, urlkey      string
	hasURL, hasKey   bool
	match            matchType
	sort             sortOrder
	closest          string
	from, to         int64
	filters          []filter
	collapseFirst    *collapseSpec
	collapseLast     *collapseSpec
	fields           []string
	limit            int64
	output           string
	omitSelfRedirect bool
}

// params is a query string as OutbackCDX parses it: repeated keys allowed,
// pairs without "=" dropped.
type params map[string][]string

// one returns the single value of key; several values are an error, as in
// OutbackCDX's MultiMap.get.
func (p params) one(key string) (string, bool, error) {
	v := p[key]
	switch len(v) {
	case 0:
		return "", false, nil
	case 1:
		return v[0], true, nil
	}
	return "", false, fmt.Errorf("there are multiple values for key %s", key)
}

// parseQuery reads the parameters OutbackCDX's Query constructor reads,
// with the same defaults; the errors it returns are OutbackCDX's messages.
func parseQuery(p params) (*query, error) {
	q := &query{from: minTimestamp, to: maxTimestamp, limit: math.MaxInt64, fields: defaultFields}
	var err error
	get := func(key string) (string, bool) {
		v, ok, e := p.one(key)
		if e != nil && err == nil {
			err = e
		}
		return v, ok
	}
	q.url, q.hasURL = get("url")
	q.urlkey, q.hasKey = get("urlkey")
	mt, _ := get("matchType")
	st, _ := get("sort")
	q.closest, _ = get("closest")
	from, hasFrom := get("from")
	to, hasTo := get("to")
	omit, _ := get("omitSelfRedirects")
	fl, hasFL := get("fl")
	limit, hasLimit := get("limit")
	q.output, _ = get("output")
	first, hasFirst := get("collapseToFirst")
	if !hasFirst {
		first, hasFirst = get("collapse")
	}
	last, hasLast := get("collapseToLast")
	if err != nil {
		return nil, err
	}
	if err := q.parseEnums(mt, st); err != nil {
		return nil, err
	}
	if hasFrom {
		if q.from, err = timestamp14(from, '0'); err != nil {
			return nil, err
		}
	}
	if hasTo {
		if q.to, err = timestamp14(to, '9'); err != nil {
			return nil, err
		}
	}
	q.omitSelfRedirect = strings.EqualFold(omit, "true")
	for _, spec := range p["filter"] {
		f, err := parseFilter(spec)
		if err != nil {
			return nil, err
		}
		q.filters = append(q.filters, f)
	}
	if err := q.parseCollapse(first, hasFirst, last, hasLast); err != nil {
		return nil, err
	}
	if hasFL {
		if q.fields, err = parseFields(fl); err != nil {
			return nil, err
		}
	}
	if hasLimit {
		if q.limit, err = strconv.ParseInt(limit, 10, 64); err != nil {
			return nil, fmt.Errorf("limit: for input string: %q", limit)
		}
	}
	return q, nil
}

func (q *query) parseEnums(mt, st string) error {
	var ok bool
	if mt == "" {
		mt = "default"
	}
	if q.match, ok = matchTypes[strings.ToUpper(mt)]; !ok {
		return fmt.Errorf("no enum constant outbackcdx.Query.MatchType.%s", strings.ToUpper(mt))
	}
	if st == "" {
		st = "default"
	}
	if q.sort, ok = sortOrders[strings.ToUpper(st)]; !ok {
		return fmt.Errorf("no enum constant outbackcdx.Query.Sort.%s", strings.ToUpper(st))
	}
	return nil
}

func (q *query) parseCollapse(first string, hasFirst bool, last string, hasLast bool) error {
	var err error
	switch {
	case hasFirst:
		q.collapseFirst, err = parseCollapse(first)
	case hasLast:
		q.collapseLast, err = parseCollapse(last)
	}
	return err
}

// parseFields splits fl and checks every name, where OutbackCDX would fail
// half-way through writing the output.
func parseFields(fl string) ([]string, error) {
	fields := strings.Split(fl, ",")
	for len(fields) > 1 && fields[len(fields)-1] == "" { // Java's split drops trailing empties
		fields = fields[:len(fields)-1]
	}
	for _, f := range fields {
		if !fieldNames[f] {
			return nil, fmt.Errorf("no such capture field: %s", f)
		}
	}
	return fields, nil
}

// timestamp14 pads a timestamp to 14 digits with pad, or truncates it.
func timestamp14(s string, pad byte) (int64, error) {
	b := []byte(s)
	for len(b) < 14 {
		b = append(b, pad)
	}
	b = b[:14]
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || strings.Trim(string(b), "0123456789") != "" {
		return 0, fmt.Errorf("timestamp %q: want digits", s)
	}
	return n, nil
}

// closestTimestamp completes a short closest= timestamp to the first
// moment it names ("2007" is 2007-01-01 00:00:00), where OutbackCDX pads
// with zeros and fails on the resulting month 00.
func closestTimestamp(s string) (int64, error) {
	full := s
	if len(s) < 14 {
		full += "00000101000000"[len(s):]
	}
	n, err := timestamp14(full, '0')
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: want digits", s)
	}
	return n, nil
}

// prepare applies OutbackCDX's compatibility hacks, wildcard expansion and
// validation, and computes the URL key.
func (q *query) prepare() error {
	if q.sort == sortClosest && q.closest == "" {
		q.sort = sortDefault // pywb 2.0 sends closest= with sort=closest
	}
	if q.match == matchDefault {
		switch {
		case q.hasURL && strings.HasSuffix(q.url, "*"):
			q.match, q.url = matchPrefix, strings.TrimSuffix(q.url, "*")
		case q.hasURL && strings.HasPrefix(q.url, "*."):
			q.match, q.url = matchDomain, q.url[2:]
		default:
			q.match = matchExact
		}
	}
	if err := q.validate(); err != nil {
		return err
	}
	if !q.hasKey {
		k, err := surt.CDXKey(q.url)
		if err != nil {
			return fmt.Errorf("url: %w", err)
		}
		q.urlkey = k
	}
	if q.match == matchPrefix && q.hasURL && strings.HasSuffix(q.url, "/") && !strings.HasSuffix(q.urlkey, "/") {
		q.urlkey += "/"
	}
	return nil
}

func (q *query) validate() error {
	if q.hasURL == q.hasKey {
		return errors.New("exactly one of 'url' or 'urlkey' is required")
	}
	switch q.sort {
	case sortClosest:
		if q.match != matchExact {
			return errors.New("sort=closest is currently only implemented for exact matches")
		}
	case sortReverse:
		if q.match != matchExact {
			return errors.New("sort=reverse is currently only implemented for exact matches")
		}
	}
	if q.from != minTimestamp || q.to != maxTimestamp {
		if q.match != matchExact {
			return errors.New("from={timestamp} and to={timestamp} are currently only implemented for exact matches")
		}
		if q.sort == sortClosest {
			return errors.New("from={timestamp} and to={timestamp} are currently not implemented for sort=closest queries")
		}
	}
	if q.sort == sortClosest {
		if _, err := closestTimestamp(q.closest); err != nil {
			return fmt.Errorf("closest: %w", err)
		}
	}
	return nil
}

// filter is one filter= parameter: "[~][!]field:pattern". Without "~" the
// pattern is a regular expression that must match the whole value; with
// "~" it is a substring. "!" inverts.
type filter struct {
	field     string
	invert    bool
	substring string
	re        *regexp.Regexp
}

var filterSpec = regexp.MustCompile(`^(~)?(!)?(\w+):(.*)$`)

func parseFilter(spec string) (filter, error) {
	m := filterSpec.FindStringSubmatch(spec)
	if m == nil {
		return filter{}, fmt.Errorf("invalid filter: %s", spec)
	}
	f := filter{field: m[3], invert: m[2] != ""}
	if !fieldNames[f.field] {
		return filter{}, fmt.Errorf("no such capture field: %s", f.field)
	}
	if m[1] != "" {
		f.substring = m[4]
		return f, nil
	}
	re, err := regexp.Compile(`^(?:` + m[4] + `)$`)
	if err != nil {
		return filter{}, fmt.Errorf("invalid filter %s: %w", spec, err)
	}
	f.re = re
	return f, nil
}

func (f *filter) match(c *capture) bool {
	v := c.get(f.field).text()
	if f.re == nil {
		return strings.Contains(v, f.substring) != f.invert
	}
	return f.re.MatchString(v) != f.invert
}

// collapseSpec is "field" or "field:N" (compare the first N characters).
type collapseSpec struct {
	field string
	n     int
}

func parseCollapse(spec string) (*collapseSpec, error) {
	field, n, hasN := strings.Cut(spec, ":")
	if !fieldNames[field] {
		return nil, fmt.Errorf("no such capture field: %s", field)
	}
	cs := &collapseSpec{field: field, n: -1}
	if hasN {
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("collapse %q: %q is not a length", spec, n)
		}
		cs.n = v
	}
	return cs, nil
}

// key is the value collapsing compares; a value shorter than n is used
// whole (OutbackCDX would fail on it).
func (cs *collapseSpec) key(c *capture) string {
	v := c.get(cs.field).text()
	if cs.n >= 0 && len(v) > cs.n {
		v = v[:cs.n]
	}
	return v
}
