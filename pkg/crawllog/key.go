package crawllog

import (
	"bytes"
	"time"
)

// keyTimeLayout is the precision of a capture key: the second, which is
// all a WARC/1.0 WARC-Date holds.
const keyTimeLayout = "20060102150405"

// CaptureKey identifies a capture by what both its WARC record and its
// crawl.log line carry: the URL (as the line writes it) and the fetch
// start to the second (the record's WARC-Date). Two captures of one URL in
// one second share a key; callers count keys rather than test them.
func CaptureKey(url string, fetchStart time.Time) string {
	b := appendField(make([]byte, 0, len(url)+16), url, noComma)
	b = append(b, ' ')
	return string(fetchStart.UTC().AppendFormat(b, keyTimeLayout))
}

// LineKey returns the CaptureKey of a crawl.log line, and false for a line
// without a fetch start ("-": nothing was fetched) or one that is not in
// the crawl.log columns.
func LineKey(line []byte) (string, bool) {
	f := bytes.Fields(line)
	if len(f) < 12 || !bytes.HasPrefix(f[7], []byte("#")) {
		return "", false
	}
	start := f[8]
	if len(start) < len(keyTimeLayout) || bytes.Equal(start, []byte(na)) {
		return "", false
	}
	b := make([]byte, 0, len(f[3])+1+len(keyTimeLayout))
	b = append(append(append(b, f[3]...), ' '), start[:len(keyTimeLayout)]...)
	return string(b), true
}
