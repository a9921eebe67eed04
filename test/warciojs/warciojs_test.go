// Package warciojs checks the WARC files Trawler writes with warcio.js, a
// WARC reader written elsewhere (Webrecorder's, the library behind
// ReplayWeb.page), so that Trawler's writer and its offline indexer are not
// only checked by readers that share their authors' reading of the spec.
//
// validate.mjs (beside this file) runs warcio.js over the files and
// reports every record, its digests as warcio.js computes them, and the
// CDXJ index warcio.js's CDXIndexer writes; the tests here judge that
// report and compare the index with pkg/warcindex's (`trawler cdx index`).
// warcio.js is pinned by package.json and package-lock.json here and
// installed into .cache/warcio by scripts/install-test-deps.sh.
package warciojs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// warcio is a node and a warcio.js installation to run validate.mjs with.
type warcio struct {
	node, prefix, script string
}

// findWarcio locates node and the pinned warcio.js. Without them the test
// is skipped on a developer's machine, but fails under CI=true: CI runs
// scripts/install-test-deps.sh first, so a missing reader there is a broken
// install, not a reason to pass quietly.
func findWarcio(t *testing.T) warcio {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...) + " (run scripts/install-test-deps.sh)"
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: " + msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found: %v", err)
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var pin struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := readJSON("package.json", &pin); err != nil || pin.Dependencies["warcio"] == "" {
		t.Fatalf("package.json here must pin warcio: %v", err)
	}
	prefix := filepath.Join(root, ".cache", "warcio")
	var installed struct {
		Version string `json:"version"`
	}
	if err := readJSON(filepath.Join(prefix, "node_modules", "warcio", "package.json"), &installed); err != nil {
		missing("warcio.js is not installed in %s: %v", prefix, err)
	}
	if installed.Version != pin.Dependencies["warcio"] {
		missing("warcio.js %s is installed in %s, package.json pins %s", installed.Version, prefix, pin.Dependencies["warcio"])
	}
	script, err := filepath.Abs("validate.mjs")
	if err != nil {
		t.Fatal(err)
	}
	return warcio{node: node, prefix: prefix, script: script}
}

// repoRoot is the directory of go.mod above the working directory (the
// package directory under go test).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// report is validate.mjs's output.
type report struct {
	Warcio string       `json:"warcio"`
	Node   string       `json:"node"`
	Files  []fileReport `json:"files"`
}

type fileReport struct {
	Path    string    `json:"path"`
	Records []*record `json:"records"`
	CDXJ    []string  `json:"cdxj"`
	Errors  []string  `json:"errors"`
}

// record is one WARC record as warcio.js read it.
type record struct {
	Version       string   `json:"version"`
	Type          string   `json:"type"`
	ID            string   `json:"id"`
	URI           string   `json:"uri"`
	Date          string   `json:"date"`
	ContentType   string   `json:"contentType"`
	ContentLength int64    `json:"contentLength"`
	BlockBytes    int64    `json:"blockBytes"`
	Offset        int64    `json:"offset"`
	Profile       string   `json:"profile"`
	RefersTo      string   `json:"refersTo"`
	RefersToURI   string   `json:"refersToURI"`
	RefersToDate  string   `json:"refersToDate"`
	ConcurrentTo  []string `json:"concurrentTo"`
	Protocols     []string `json:"protocols"`
	HTTPProto     string   `json:"httpProto"`
	HTTPStatus    int      `json:"httpStatus"`
	HTTPMethod    string   `json:"httpMethod"`
	Problems      []string `json:"problems"`
	// BlockDigest and PayloadDigest are the header values; *Computed what
	// warcio.js computed over the bytes it read, *Unchecked why it could
	// not. PayloadCheck says what was done with the payload digest.
	BlockDigest      string `json:"blockDigest"`
	BlockComputed    string `json:"blockComputed"`
	BlockUnchecked   string `json:"blockUnchecked"`
	PayloadDigest    string `json:"payloadDigest"`
	PayloadComputed  string `json:"payloadComputed"`
	PayloadUnchecked string `json:"payloadUnchecked"`
	PayloadCheck     string `json:"payloadCheck"`

	file string // set by the test: the WARC the record is in
}

func (r *record) String() string {
	return fmt.Sprintf("%s offset %d (%s %s)", filepath.Base(r.file), r.Offset, r.Type, r.URI)
}

// isHTTP reports whether the record's block is an HTTP message.
func (r *record) isHTTP() bool {
	return strings.HasPrefix(strings.ToLower(r.ContentType), "application/http")
}

// run runs validate.mjs over files.
func (w warcio) run(t *testing.T, files []string) *report {
	t.Helper()
	if len(files) == 0 {
		t.Fatal("no WARC files to validate")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, w.node, append([]string{w.script, w.prefix}, files...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node validate.mjs: %v\n%s", err, stderr.Bytes())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("validate.mjs output: %v\n%.2000s", err, stdout.Bytes())
	}
	if len(rep.Files) != len(files) {
		t.Fatalf("validate.mjs reported %d files, given %d", len(rep.Files), len(files))
	}
	for _, f := range rep.Files {
		for _, r := range f.Records {
			r.file = f.Path
		}
	}
	t.Logf("warcio.js %s on node %s read %d files", rep.Warcio, rep.Node, len(rep.Files))
	return &rep
}

// failures reports up to max errors of one kind of check in full and then
// only counts them, so that one systematic fault does not bury the rest.
type failures struct {
	t      *testing.T
	what   string
	max, n int
}

func newFailures(t *testing.T, what string) *failures {
	return &failures{t: t, what: what, max: 15}
}

func (f *failures) add(format string, args ...any) {
	f.t.Helper()
	f.n++
	if f.n <= f.max {
		f.t.Errorf(f.what+": "+format, args...)
	}
}

func (f *failures) done() {
	f.t.Helper()
	if f.n > f.max {
		f.t.Errorf("%s: %d more like the above", f.what, f.n-f.max)
	}
}

// checkRecords fails the test for every record warcio.js could not read
// cleanly or whose digest does not match, and returns every record. A
// digest warcio.js cannot check (a revisit's payload) is left to the
// caller; any other unchecked digest is a failure, since Trawler writes
// only sha1 digests, which warcio.js computes.
func checkRecords(t *testing.T, rep *report) []*record {
	t.Helper()
	var all []*record
	bad := newFailures(t, "warcio.js")
	defer bad.done()
	for _, f := range rep.Files {
		for _, e := range f.Errors {
			bad.add("%s: %s", f.Path, e)
		}
		if len(f.Records) == 0 || f.Records[0].Type != "warcinfo" {
			bad.add("%s: does not start with a warcinfo record", f.Path)
		}
		for _, r := range f.Records {
			all = append(all, r)
			for _, p := range r.Problems {
				bad.add("%s: %s", r, p)
			}
			switch {
			case r.BlockDigest == "":
				// validate.mjs reports a missing block digest as a problem,
				// except on warcinfo, where WARC 1.1 makes it optional.
			case r.BlockUnchecked != "":
				bad.add("%s: block digest %s not checked: %s", r, r.BlockDigest, r.BlockUnchecked)
			case !strings.EqualFold(r.BlockComputed, r.BlockDigest):
				bad.add("%s: WARC-Block-Digest %s, warcio.js computes %s", r, r.BlockDigest, r.BlockComputed)
			}
			switch r.PayloadCheck {
			case "checked":
				if !strings.EqualFold(r.PayloadComputed, r.PayloadDigest) {
					bad.add("%s: WARC-Payload-Digest %s, warcio.js computes %s", r, r.PayloadDigest, r.PayloadComputed)
				}
			case "absent":
				if r.Type == "response" && r.isHTTP() {
					bad.add("%s: HTTP response without WARC-Payload-Digest", r)
				}
			default:
				if r.Type != "revisit" {
					bad.add("%s: payload digest %s not checked: %s", r, r.PayloadDigest, r.PayloadCheck)
				}
			}
		}
	}
	return all
}

// writeTo keeps validate.mjs's report next to the test's other output when
// TRAWLER_WARCIO_REPORT names a file, for looking into a failure by hand.
func (rep *report) writeTo(t *testing.T) {
	path := os.Getenv("TRAWLER_WARCIO_REPORT")
	if path == "" {
		return
	}
	b, err := json.MarshalIndent(rep, "", " ")
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		t.Logf("TRAWLER_WARCIO_REPORT: %v", err)
	}
}
