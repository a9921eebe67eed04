package cookies

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxLineBytes bounds a cookies.txt line; a longer one is reported and
// skipped rather than buffered whole.
const maxLineBytes = 64 << 10

// loadBatch is how many domains one pipeline writes.
const loadBatch = 500

// httpOnlyPrefix marks an HttpOnly cookie's domain in curl's format.
const httpOnlyPrefix = "#HttpOnly_"

// LineError is a cookies.txt line LoadNetscape skipped, and why. It never
// holds the cookie's value.
type LineError struct {
	Line   int // 1-based
	Reason string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("cookies.txt line %d: %s", e.Line, e.Reason)
}

// LoadNetscape loads a Netscape cookies.txt (the format of curl, wget and
// browser exporters; Heritrix's cookiesLoadFile): one cookie a line, seven
// TAB-separated fields (domain, include-subdomains TRUE/FALSE, path, secure
// TRUE/FALSE, expiry in Unix seconds with 0 for a session cookie, name,
// value); a line of six fields has an empty value, as curl reads it. Lines
// starting with '#' are comments except for the "#HttpOnly_" domain prefix.
// Cookies already expired are skipped silently: exported files are full of
// them. Bad lines are skipped and reported in err (errors.Join of
// *LineError) with whatever Redis failure occurred; n counts the cookies
// stored. A later line for the same cookie replaces an earlier one.
func (j *Jar) LoadNetscape(ctx context.Context, r io.Reader) (n int, err error) {
	now := j.now()
	byKey := make(map[string]map[string]entry)
	var keys []string
	var errs []error
	expired := 0
	lineErr := func(line int, format string, a ...any) {
		errs = append(errs, &LineError{Line: line, Reason: fmt.Sprintf(format, a...)})
	}
	err = eachLine(r, func(line int, text string, tooLong bool) {
		if tooLong {
			lineErr(line, "longer than %d bytes", maxLineBytes)
			return
		}
		e, skip, reason := j.parseNetscapeLine(text)
		switch {
		case reason != "":
			lineErr(line, "%s", reason)
			return
		case skip:
			return
		case e.expired(now.Unix()):
			expired++
			return
		}
		e.Created = now.UnixMicro() + int64(line)
		key := jarKey(e.Domain)
		if byKey[key] == nil {
			byKey[key] = make(map[string]entry)
			keys = append(keys, key)
		}
		byKey[key][e.field()] = e
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("read cookies.txt: %w", err))
	}
	n, serr := j.storeLoaded(ctx, keys, byKey)
	if serr != nil {
		errs = append(errs, serr)
	}
	if expired > 0 {
		j.log.InfoContext(ctx, "skipped expired cookies in cookies.txt", "count", expired)
	}
	return n, errors.Join(errs...)
}

// storeLoaded writes loaded cookies in batches of domains and returns how
// many were stored.
func (j *Jar) storeLoaded(ctx context.Context, keys []string, byKey map[string]map[string]entry) (int, error) {
	n := 0
	for start := 0; start < len(keys); start += loadBatch {
		batch := keys[start:min(start+loadBatch, len(keys))]
		writes := make([]*write, len(batch))
		count := 0
		for i, k := range batch {
			writes[i] = &write{key: k}
			for _, e := range byKey[k] {
				writes[i].set(&e)
				count++
			}
		}
		evicted, err := j.store(ctx, writes)
		if err != nil {
			return n, fmt.Errorf("cookies.txt: %w", err)
		}
		n += count
		for k, c := range evicted {
			j.log.WarnContext(ctx, "cookies.txt holds more cookies than the per-domain cap; evicted the oldest",
				"domain", k, "count", c, "max", j.opts.MaxPerDomain)
		}
	}
	return n, nil
}

// parseNetscapeLine parses one line: the entry, or skip for blank and
// comment lines, or the reason the line is bad.
func (j *Jar) parseNetscapeLine(text string) (e entry, skip bool, reason string) {
	if strings.HasPrefix(text, httpOnlyPrefix) {
		e.HTTPOnly = true
		text = text[len(httpOnlyPrefix):]
	} else if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
		return entry{}, true, ""
	}
	f := strings.Split(text, "\t")
	switch len(f) {
	case 7:
	case 6:
		f = append(f, "")
	default:
		return entry{}, false, fmt.Sprintf("has %d TAB-separated fields, want 7", len(f))
	}
	var ok bool
	if e.Domain, e.HostOnly, reason = netscapeDomain(f[0], f[1]); reason != "" {
		return entry{}, false, reason
	}
	if e.Secure, ok = netscapeBool(f[3]); !ok {
		return entry{}, false, fmt.Sprintf("secure field %q is not TRUE or FALSE", truncate(f[3], 16))
	}
	if e.Path = f[2]; cookiePath("/", e.Path) != e.Path {
		return entry{}, false, fmt.Sprintf("path %q does not start with '/' or has a control character or ';'", truncate(f[2], 64))
	}
	exp, err := strconv.ParseInt(f[4], 10, 64)
	if err != nil || exp < 0 {
		return entry{}, false, fmt.Sprintf("expiry %q is not a Unix time in seconds", truncate(f[4], 24))
	}
	e.Expires = min(exp, maxUnix)
	e.Name, e.Value = f[5], f[6]
	if len(e.Value) >= 2 && e.Value[0] == '"' && e.Value[len(e.Value)-1] == '"' {
		e.Value, e.Quoted = e.Value[1:len(e.Value)-1], true
	}
	if err := checkNameValue(e.Name, e.Value, j.opts.MaxValueBytes); err != nil {
		return entry{}, false, err.Error()
	}
	return e, false, ""
}

// netscapeDomain reads the domain and include-subdomains fields. A domain
// cookie for a public suffix would go to every site under it, so it is
// refused as RFC 6265 refuses such a Domain attribute.
func netscapeDomain(domain, sub string) (string, bool, string) {
	include, ok := netscapeBool(sub)
	if !ok {
		return "", false, fmt.Sprintf("include-subdomains field %q is not TRUE or FALSE", truncate(sub, 16))
	}
	d := strings.ToLower(strings.TrimPrefix(domain, "."))
	switch {
	case isIP(d):
		return d, true, "" // an address has no subdomains
	case !validDomainChars(d) || d[0] == '.' || strings.HasSuffix(d, "."):
		return "", false, fmt.Sprintf("malformed domain %q", truncate(domain, 64))
	case include && isPublicSuffix(d):
		return "", false, fmt.Sprintf("domain %q is a public suffix", d)
	}
	return d, !include, ""
}

// netscapeBool reads TRUE or FALSE, in any case as curl does.
func netscapeBool(s string) (v, ok bool) {
	switch strings.ToUpper(s) {
	case "TRUE":
		return true, true
	case "FALSE":
		return false, true
	}
	return false, false
}

// eachLine calls fn with each line of r (1-based number, without the line
// ending or a leading byte-order mark); a line over maxLineBytes is passed
// with tooLong and its text dropped.
func eachLine(r io.Reader, fn func(line int, text string, tooLong bool)) error {
	br := bufio.NewReaderSize(r, maxLineBytes)
	for line := 1; ; line++ {
		b, err := br.ReadSlice('\n')
		tooLong := errors.Is(err, bufio.ErrBufferFull)
		if tooLong {
			b = nil // the buffer is reused while the rest is skipped
		}
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n')
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if len(b) == 0 && errors.Is(err, io.EOF) && !tooLong {
			return nil
		}
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		}
		b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
		fn(line, string(b), tooLong)
		if err != nil {
			return nil
		}
	}
}
