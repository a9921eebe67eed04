package testweb

import (
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
)

// redirectLoop serves /loop/a and /loop/b, each a 302 to the other with a
// relative Location, and 404 for any other /loop/ path.
func redirectLoop(w http.ResponseWriter, r *http.Request) {
	var next string
	switch r.URL.Path {
	case PathRedirectLoop:
		next = "b"
	case PathRedirectLoopB:
		next = "a"
	default:
		writeBody(w, r, http.StatusNotFound, ctHTML, []byte(notFoundBody), false)
		return
	}
	w.Header().Set("Location", next)
	// The body carries no link: the Location header is the only way on.
	writeBody(w, r, http.StatusFound, ctHTML, []byte("<!DOCTYPE html>\n<html><head><title>Found</title></head><body><p>Moved.</p></body></html>\n"), false)
}

// calDate is a day (or, with day 0, a month) of the hostile calendar, in
// the proleptic Gregorian calendar.
type calDate struct{ year, month, day int }

// monthsFrom is the month number used for prev/next arithmetic.
func (d calDate) monthsFrom() int { return d.year*12 + d.month - 1 }

// monthOf returns the month with number m (year*12 + month-1).
func monthOf(m int) calDate { return calDate{year: m / 12, month: m%12 + 1} }

// path renders the canonical path: /calendar/YYYY/MM or /calendar/YYYY/MM/DD.
// Years below 1000 are zero-padded to four digits; larger ones are not.
func (d calDate) path() string {
	p := fmt.Sprintf("/calendar/%04d/%02d", d.year, d.month)
	if d.day > 0 {
		p += fmt.Sprintf("/%02d", d.day)
	}
	return p
}

// inRange reports whether d lies in the calendar's years.
func (d calDate) inRange() bool { return d.year >= CalendarMinYear && d.year <= CalendarMaxYear }

// daysIn returns the number of days in month m of year y.
func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// parseCalDate parses a canonical calendar path; anything else (a
// non-canonical spelling, a month 13, February 30, a year out of range) is
// not a calendar page.
func parseCalDate(p string) (calDate, bool) {
	parts := strings.Split(strings.TrimPrefix(p, "/calendar/"), "/")
	if !strings.HasPrefix(p, "/calendar/") || len(parts) < 2 || len(parts) > 3 {
		return calDate{}, false
	}
	var nums [3]int
	for i, s := range parts {
		if len(s) == 0 || len(s) > 9 || strings.TrimLeft(s, "0123456789") != "" {
			return calDate{}, false
		}
		nums[i], _ = strconv.Atoi(s) // at most nine digits: cannot fail
	}
	d := calDate{year: nums[0], month: nums[1], day: nums[2]}
	if !d.inRange() || d.month < 1 || d.month > 12 {
		return calDate{}, false
	}
	if len(parts) == 3 && (d.day < 1 || d.day > daysIn(d.year, d.month)) {
		return calDate{}, false
	}
	return d, d.path() == p
}

// calendarLinks lists the root-relative links of calendar page d.
func calendarLinks(d calDate) []string {
	var out []string
	add := func(c calDate) {
		if c.inRange() {
			out = append(out, c.path())
		}
	}
	if d.day == 0 {
		m := d.monthsFrom()
		add(monthOf(m - 1))
		add(monthOf(m + 1))
		for day := 1; day <= daysIn(d.year, d.month); day++ {
			out = append(out, calDate{d.year, d.month, day}.path())
		}
		return out
	}
	month := calDate{year: d.year, month: d.month}
	out = append(out, month.path())
	prev, next := calDate{d.year, d.month, d.day - 1}, calDate{d.year, d.month, d.day + 1}
	if d.day == 1 {
		prev = monthOf(month.monthsFrom() - 1)
		prev.day = daysIn(prev.year, prev.month)
	}
	if d.day == daysIn(d.year, d.month) {
		next = monthOf(month.monthsFrom() + 1)
		next.day = 1
	}
	add(prev)
	add(next)
	return out
}

// hostileCalendar serves the endless calendar of hostile.test.
func hostileCalendar(w http.ResponseWriter, r *http.Request) {
	d, ok := parseCalDate(r.URL.Path)
	if !ok {
		writeBody(w, r, http.StatusNotFound, ctHTML, []byte(notFoundBody), false)
		return
	}
	title := fmt.Sprintf("Events %04d-%02d", d.year, d.month)
	if d.day > 0 {
		title += fmt.Sprintf("-%02d", d.day)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><title>%s</title></head><body><h1>%s</h1><ul>\n", title, title)
	for _, l := range calendarLinks(d) {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(l), html.EscapeString(l))
	}
	b.WriteString("</ul></body></html>\n")
	writeBody(w, r, http.StatusOK, ctHTML, []byte(b.String()), false)
}

// HugeBodyPeriod is the length of the pseudo-random block that the
// PathHugeBody body repeats. The choice trades realism for cost:
//   - not zeros, so a fetcher that loses, repeats or fails to copy a
//     buffer produces a different digest (zeros would hide it);
//   - a prime period, so a dropped or doubled power-of-two-sized buffer
//     shifts the pattern's phase and changes the digest too;
//   - shorter than DEFLATE's 32 KiB window, so gzip finds it at once: a
//     WARC of the body stays small (about 1/170 of it) and writes at
//     nearly the speed of zeros, keeping tests that fetch the whole
//     gigabyte fast, while random bytes would gzip at a sixth of the speed
//     and fill a gigabyte of disk.
//
// Generating it costs one 4 KiB ChaCha8 block per response.
const HugeBodyPeriod = 4093

// HugeBodySHA1 is the Heritrix-style digest (sha1:BASE32) of the whole
// PathHugeBody body, for tests that check a stored payload.
const HugeBodySHA1 = "sha1:P32E3TMXPJ32CZT272HREQNXPAVLR5LS"

// hugeBodyBlock returns the repeated block of the huge body. Its seed is
// fixed (not the site seed) so HugeBodySHA1 is a constant.
func hugeBodyBlock() []byte {
	b := make([]byte, HugeBodyPeriod)
	_, _ = rand.NewChaCha8([32]byte{'t', 'r', 'a', 'w', 'l', 'e', 'r', ' ', 'h', 'u', 'g', 'e'}).Read(b) // never fails
	return b
}

// hugeBodyReader reads the huge body from a buffer of whole periods.
type hugeBodyReader struct {
	buf  []byte // whole periods, so each copy starts at phase 0
	left int64
	off  int // phase within buf
}

// HugeBodyReader returns a reader of exactly the bytes PathHugeBody
// sends, generated as they are read in O(1) memory.
func HugeBodyReader() io.Reader { return newHugeBodyReader() }

// newHugeBodyReader builds the reader with a 64 KiB-ish buffer.
func newHugeBodyReader() *hugeBodyReader {
	block := hugeBodyBlock()
	buf := make([]byte, 0, HugeBodyPeriod*(largeChunk*2/HugeBodyPeriod))
	for len(buf)+HugeBodyPeriod <= cap(buf) {
		buf = append(buf, block...)
	}
	return &hugeBodyReader{buf: buf, left: HugeBodyBytes}
}

// Read copies the next bytes of the pattern.
func (h *hugeBodyReader) Read(p []byte) (int, error) {
	if h.left == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(int64(len(p)), h.left)], h.buf[h.off:])
	h.off = (h.off + n) % len(h.buf)
	h.left -= int64(n)
	return n, nil
}

// next returns the next slice of the pattern without copying, at most one
// buffer long, or nil at the end.
func (h *hugeBodyReader) next() []byte {
	if h.left == 0 {
		return nil
	}
	chunk := h.buf[h.off:]
	chunk = chunk[:min(int64(len(chunk)), h.left)]
	h.off = (h.off + len(chunk)) % len(h.buf)
	h.left -= int64(len(chunk))
	return chunk
}

// hugeBody streams HugeBodyBytes with a Content-Length until done, the
// client leaving or the server closing.
func (srv *Server) hugeBody(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", ctBytes)
	w.Header().Set("Content-Length", strconv.Itoa(HugeBodyBytes))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	body := newHugeBodyReader()
	for chunk := body.next(); chunk != nil; chunk = body.next() {
		if _, err := w.Write(chunk); err != nil {
			return
		}
		select {
		case <-srv.done:
			return
		case <-r.Context().Done():
			return
		default:
		}
	}
}

// growingQuery serves /grow?QUERY: a page linking the same path with one
// parameter more (pN=N), as a page appending to its own URL does.
func growingQuery(w http.ResponseWriter, r *http.Request) {
	q := r.URL.RawQuery
	next := "p1=1"
	if q != "" {
		n := strings.Count(q, "&") + 2
		next = q + "&p" + strconv.Itoa(n) + "=" + strconv.Itoa(n)
	}
	body := "<!DOCTYPE html>\n<html><head><title>grow</title></head><body><p><a href=\"/grow?" +
		html.EscapeString(next) + "\">more</a></p></body></html>\n"
	writeBody(w, r, http.StatusOK, ctHTML, []byte(body), false)
}

// challengeInterstitial serves what Cloudflare sends a client it wants to
// check instead of the page.
func challengeInterstitial(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cf-Mitigated", "challenge")
	w.Header().Set("Server", "cloudflare")
	writeBody(w, r, http.StatusForbidden, ctHTML, []byte(`<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>
<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1"></script></body></html>
`), false)
}
