package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/reports"
	"github.com/trawler-crawl/trawler/pkg/scope"
)

var reportFiles = []string{reports.CrawlReport, reports.SeedsReport, reports.HostsReport,
	reports.SourceReport, reports.MimetypeReport, reports.ResponseCodeReport}

// crawledFixture is the reports package's golden events (the npld stream:
// they name none) and copies of the blog target's events as the bypm
// stream, in the order they are produced.
func crawledFixture(t *testing.T) []messages.Crawled {
	t.Helper()
	f, err := os.Open("../../pkg/reports/testdata/events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs, bypm []messages.Crawled
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ev, err := messages.DecodeCrawled(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if ev.Seed == "tid:1002:http://blog.example.com/" {
			cp := ev
			cp.ExtraInfo = map[string]any{"stream": "bypm"}
			cp.Seed = "tid:2002:http://blog.example.com/"
			bypm = append(bypm, cp)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return append(evs, bypm...)
}

// expectReports writes, with pkg/reports directly, the reports of the
// events keep selects, as `trawler reports` should write them.
func expectReports(t *testing.T, evs []messages.Crawled, keep func(messages.Crawled) bool) string {
	t.Helper()
	o := reports.Options{CrawlName: "frequent-npld"}
	if profile.Default().Scope.SeedsRedirectNewSeeds {
		o.RedirectSeedHops = scope.SeedRedirectMaxHops
	}
	agg := reports.New(o)
	var first, last time.Time
	for _, ev := range evs {
		if !keep(ev) {
			continue
		}
		agg.Add(ev)
		at, err := time.Parse(time.RFC3339Nano, ev.Timestamp)
		if err != nil {
			t.Fatal(err)
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	dir := t.TempDir()
	if err := agg.WriteAll(dir, reports.RunInfo{Start: first, End: last, Status: "Running"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// `trawler reports` reads a cluster's crawled topic (here a kfake broker)
// and writes the six reports of the crawl, one stream, one target or one
// launch, with no standalone process.
func TestReportsFromCluster(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "fc.crawled"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	evs := crawledFixture(t)
	recs := []*kgo.Record{{Topic: "fc.crawled", Value: []byte("{not a crawled event")}}
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: "fc.crawled", Key: []byte(ev.URL), Value: b})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	streamOf := func(ev messages.Crawled) string {
		if s, _ := ev.ExtraInfo["stream"].(string); s != "" {
			return s
		}
		return "npld"
	}
	tests := []struct {
		name  string
		flags []string
		keep  func(messages.Crawled) bool
	}{
		{"whole crawl", nil, func(messages.Crawled) bool { return true }},
		{"one stream", []string{"--stream", "bypm"}, func(ev messages.Crawled) bool { return streamOf(ev) == "bypm" }},
		{"one target", []string{"--source", "tid:1002:http://blog.example.com/"},
			func(ev messages.Crawled) bool { return ev.Seed == "tid:1002:http://blog.example.com/" }},
		{"one launch", []string{"--launch", "20240117090000"},
			func(ev messages.Crawled) bool {
				return slices.Contains(strings.Split(ev.Annotations, ","), "launchTimestamp:20240117090000")
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "reports")
			args := append([]string{"reports", "--kafka", strings.Join(c.ListenAddrs(), ","), "--crawl", "fc",
				"--set", "crawl.name=frequent-npld", "--out", out, "--log-format", "text"}, tc.flags...)
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "reports written to "+out) {
				t.Errorf("stdout %q", stdout)
			}
			if !strings.Contains(stderr, "undecodable=1") {
				t.Errorf("the undecodable record is not reported:\n%s", stderr)
			}
			want := expectReports(t, evs, tc.keep)
			for _, name := range reportFiles {
				have, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatalf("%s not written: %v", name, err)
				}
				exp, err := os.ReadFile(filepath.Join(want, name))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(have, exp) {
					t.Errorf("%s differs\n--- got\n%s--- want\n%s", name, have, exp)
				}
			}
		})
	}
}

func TestReportsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"reports", "--crawl", "xc"},
		{"reports", "--stream", "nope"},
		{"reports", "--launch", "2024"},
	} {
		if code, _, errOut := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, errOut)
		}
	}
}
