package replay_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// record is a response or revisit record read back from the crawl's WARCs
// with gowarc, independently of pkg/replay: what a replay of it must give.
type record struct {
	file   string
	viral  bool
	typ    gowarc.RecordType
	uri    string
	date   string // WARC-Date as written
	ts     string // its 14-digit CDX timestamp
	status int    // HTTP status in the record's block
	// profile of a revisit (WARC-Profile); refersTo and refersDate name
	// its original.
	profile, refersTo, refersDate string
	digest                        string // WARC-Payload-Digest
	// payloadHash and payloadLen are the SHA-256 and length of what
	// follows the HTTP header in a response's block: the payload as
	// stored.
	payloadHash [sha256.Size]byte
	payloadLen  int
}

func (r *record) String() string {
	return fmt.Sprintf("%s %s at %s (%s)", r.kind(), r.uri, r.date, filepath.Base(r.file))
}

// kind names the record for the counts.
func (r *record) kind() string {
	switch {
	case r.typ == gowarc.Response:
		return "response"
	case strings.HasSuffix(r.profile, "/server-not-modified"):
		return "revisit (server-not-modified)"
	case strings.HasSuffix(r.profile, "/identical-payload-digest"):
		return "revisit (identical-payload-digest)"
	}
	return "revisit (" + r.profile + ")"
}

// readRecords reads every response and revisit record of an http(s) URI
// in files.
func readRecords(t *testing.T, files []string) []*record {
	t.Helper()
	var out []*record
	for _, name := range files {
		r, err := warcwriter.OpenReader(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, _, _, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := readRecord(t, name, rec); got != nil {
				out = append(out, got)
			}
			_ = rec.Close()
		}
		_ = r.Close()
	}
	return out
}

func readRecord(t *testing.T, file string, rec gowarc.WarcRecord) *record {
	t.Helper()
	h := rec.WarcHeader()
	uri := h.Get(gowarc.WarcTargetURI)
	if (rec.Type() != gowarc.Response && rec.Type() != gowarc.Revisit) ||
		!(strings.HasPrefix(uri, "http:") || strings.HasPrefix(uri, "https:")) {
		return nil
	}
	date, err := time.Parse(time.RFC3339Nano, h.Get(gowarc.WarcDate))
	if err != nil {
		t.Fatalf("%s: %s: WARC-Date: %v", file, uri, err)
	}
	raw, err := rec.Block().RawBytes()
	if err != nil {
		t.Fatal(err)
	}
	block, err := io.ReadAll(raw)
	if err != nil {
		t.Fatalf("%s: %s: %v", file, uri, err)
	}
	r := &record{
		file: file, viral: strings.Contains(filepath.Base(file), "-VIRAL-"), typ: rec.Type(), uri: uri,
		date: h.Get(gowarc.WarcDate), ts: date.UTC().Format("20060102150405"),
		profile: h.Get(gowarc.WarcProfile), refersTo: h.Get(gowarc.WarcRefersToTargetURI),
		refersDate: h.Get(gowarc.WarcRefersToDate), digest: h.Get(gowarc.WarcPayloadDigest),
	}
	end := bytes.Index(block, []byte("\r\n\r\n"))
	if end < 0 {
		t.Fatalf("%s: no HTTP header end in its block", r)
	}
	status := strings.Fields(string(block[:bytes.IndexByte(block, '\n')]))
	if len(status) < 2 {
		t.Fatalf("%s: status line %q", r, status)
	}
	if r.status, err = strconv.Atoi(status[1]); err != nil {
		t.Fatalf("%s: status line %q", r, status)
	}
	payload := block[end+4:]
	r.payloadHash, r.payloadLen = sha256.Sum256(payload), len(payload)
	return r
}

// truth is what replaying a capture must give: the status and payload of
// the full (response) record whose payload the capture has.
type truth struct {
	orig *record
	err  error // the original cannot be found in the WARCs
}

// originals resolves every record to the response whose payload it has:
// itself, or for a revisit the response at its WARC-Refers-To-Target-URI
// and WARC-Refers-To-Date (exactly, as written) with its digest,
// following a revisit of a revisit.
func originals(recs []*record) map[*record]truth {
	byURIDate := map[string][]*record{}
	for _, r := range recs {
		byURIDate[r.uri+" "+r.date] = append(byURIDate[r.uri+" "+r.date], r)
	}
	out := map[*record]truth{}
	for _, r := range recs {
		cur := r
		for hops := 0; cur != nil && cur.typ == gowarc.Revisit; hops++ {
			var next *record
			for _, c := range byURIDate[cur.refersTo+" "+cur.refersDate] {
				if strings.EqualFold(c.digest, cur.digest) {
					next = c
				}
			}
			if next == nil || hops > 10 {
				out[r] = truth{err: fmt.Errorf("%s refers to %s at %s with digest %s: no such record in the WARCs",
					cur, cur.refersTo, cur.refersDate, cur.digest)}
				cur = nil
				break
			}
			cur = next
		}
		if cur != nil {
			out[r] = truth{orig: cur}
		}
	}
	return out
}

// sortRecords orders records by URI, then time, then file.
func sortRecords(recs []*record) {
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if a.uri != b.uri {
			return a.uri < b.uri
		}
		if a.ts != b.ts {
			return a.ts < b.ts
		}
		return a.file < b.file
	})
}
