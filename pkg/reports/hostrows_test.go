package reports

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Host rows tallied outside the Aggregator, added up and printed, give
// the hosts report the Aggregator prints, in its order; crawl-report.txt
// then prints the hosts count given.
func TestExternalHostsMatchTable(t *testing.T) {
	evs := []messages.Crawled{
		{URL: "http://a.example/", StatusCode: 200, Size: messages.Int64(10)},
		{URL: "http://a.example/x", StatusCode: 200, Size: messages.Int64(5), Annotations: "duplicate:digest"},
		{URL: "http://b.example/", StatusCode: 304},
		{URL: "http://b.example/r", StatusCode: -9998},
		{URL: "http://c.example/", StatusCode: 200, Size: messages.Int64(1), Seed: "t1"},
		{URL: "http://c.example/y", StatusCode: 200, Seed: "t1"},
		{URL: "http://a.example/y", StatusCode: 200, Seed: "t1"},
		{URL: "http://a.example/z", StatusCode: 200, Seed: "t0"},
		{URL: "http://a.example/f", StatusCode: 500, Seed: "t0"},
		{URL: "dns:a.example", StatusCode: 1, Size: messages.Int64(50)},
		{URL: "", StatusCode: 200},
	}
	seeds := []string{"http://a.example/", "http://seedonly.example/"}
	in := New(Options{Seeds: seeds})
	ext := New(Options{Seeds: seeds, ExternalHosts: true})
	rows := map[string]*HostRow{}
	order := []string{}
	add := func(h string, r HostRow) {
		if rows[h] == nil {
			rows[h] = &HostRow{}
			order = append(order, h)
		}
		rows[h].Add(r)
	}
	for _, s := range seeds {
		if h, ok := SeedHost(s); ok {
			add(h, HostRow{})
		}
	}
	pairs := map[string]int64{}
	for _, ev := range evs {
		in.Add(ev)
		ext.Add(ev)
		if src, h, ok := SourceHostOf(&ev); ok {
			pairs[string(SourceOrderKey(src, h, 0))]++ // counted, then ordered below
		}
		if h, r, ok := HostRowOf(&ev); ok {
			add(h, r)
		} else if ev.URL != "" {
			t.Errorf("%s: no host row", ev.URL)
		}
	}
	// Order by HostsOrderKey, as an external sort would.
	keys := map[string]string{}
	for _, h := range order {
		keys[string(HostsOrderKey(h, *rows[h]))] = h
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	b := []byte(HostsReportHeader)
	for _, k := range sorted {
		r, err := DecodeHostRow(rows[keys[k]].Encode())
		if err != nil {
			t.Fatal(err)
		}
		b = AppendHostLine(b, keys[k], r, 0)
	}
	hostsFile := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hostsFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var ordered []string
	for k, n := range pairs {
		parts := strings.Split(k, "\x00")
		ordered = append(ordered, string(SourceOrderKey(parts[0], parts[2], n))+"\x00"+strconv.FormatInt(n, 10))
	}
	slices.Sort(ordered)
	src := []byte(SourceReportHeader)
	for _, k := range ordered {
		parts := strings.Split(k, "\x00")
		n, _ := strconv.ParseInt(parts[3], 10, 64)
		src = AppendSourceLine(src, parts[0], parts[2], n)
	}
	sourcesFile := filepath.Join(t.TempDir(), "sources")
	if err := os.WriteFile(sourcesFile, src, 0o644); err != nil {
		t.Fatal(err)
	}
	dirIn, dirExt := t.TempDir(), t.TempDir()
	if err := in.WriteAll(dirIn, RunInfo{}); err != nil {
		t.Fatal(err)
	}
	if err := ext.WriteAll(dirExt, RunInfo{HostsFile: hostsFile, SourcesFile: sourcesFile, HostsVisited: len(order) - 1}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{HostsReport, CrawlReport, SeedsReport, SourceReport} {
		a, _ := os.ReadFile(filepath.Join(dirIn, name))
		e, _ := os.ReadFile(filepath.Join(dirExt, name))
		if string(a) != string(e) {
			t.Errorf("%s:\ntable:\n%s\nexternal:\n%s", name, a, e)
		}
	}
	if ext.Dropped() != 0 || len(ext.hosts) != 0 {
		t.Errorf("external aggregator kept %d hosts", len(ext.hosts))
	}
	if err := ext.WriteAll(t.TempDir(), RunInfo{HostsFile: filepath.Join(t.TempDir(), "gone")}); err == nil {
		t.Error("a missing hosts file: no error")
	}
}

// A host row that is not Encode's form is refused, with the field.
func TestDecodeHostRowBad(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "0 fields"},
		{"1 2 3", "3 fields"},
		{"1 2 3 4 5 6 7 8 9 10 x", "field 11"},
	} {
		if _, err := DecodeHostRow([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}
