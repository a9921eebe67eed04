package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// `trawler frontier rebuild` fills an empty Redis from the journal, refuses
// a frontier that holds state unless --force, and the other verbs show and
// steer the result.
func TestFrontierCommands(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	kc, cl := embeddedtest.Kafka(t, 2)
	var recs []*kgo.Record
	for _, u := range []string{"http://a.example/", "http://a.example/done", "http://b.example/x"} {
		b, _ := json.Marshal(messages.Launch{URL: u, Hop: "L", ParentURL: "http://a.example/"})
		recs = append(recs, &kgo.Record{Topic: "fc.inscope.npld", Key: []byte("k"), Value: b})
	}
	ev, _ := json.Marshal(messages.Crawled{URL: "http://a.example/done", StatusCode: 200, CrawlName: "frequent", Timestamp: "2024-01-17T09:00:00.000Z"})
	recs = append(recs, &kgo.Record{Topic: "fc.crawled", Key: []byte("k"), Value: ev},
		&kgo.Record{Topic: "fc.inscope.npld", Key: []byte("k"), Value: []byte("not json")})
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--redis", rdb.Options().Addr, "--log-level", "error"}
	rebuild := append([]string{"frontier", "rebuild", "--kafka", strings.Join(kc.Brokers, ",")}, flags...)

	code, out, errOut := runCLI(t, rebuild...)
	if code != 0 || !strings.Contains(out, "queued again:           2") || !strings.Contains(out, "finished URIs replayed: 1") {
		t.Fatalf("rebuild: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, rebuild...); code != 1 || !strings.Contains(errOut, "not empty") {
		t.Fatalf("second rebuild: exit %d %s", code, errOut)
	}
	if code, out, errOut := runCLI(t, append(rebuild, "--force")...); code != 0 || !strings.Contains(out, "queued again:           0") {
		t.Fatalf("forced rebuild: exit %d\n%s%s", code, out, errOut)
	}

	code, out, _ = runCLI(t, append([]string{"frontier", "stats", "--json"}, flags...)...)
	var st frontier.Stats
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		t.Fatalf("stats: exit %d, %v: %s", code, err, out)
	}
	if st.Queued != 2 || st.Hosts != 2 || st.ReadyHosts != 2 {
		t.Fatalf("stats after rebuild: %+v", st)
	}
	if code, out, _ := runCLI(t, append([]string{"frontier", "pause", "--host", "b.example"}, flags...)...); code != 0 || !strings.Contains(out, "paused") {
		t.Fatalf("pause host: %d %s", code, out)
	}
	code, out, _ = runCLI(t, append([]string{"frontier", "host", "b.example"}, flags...)...)
	if code != 0 || !strings.Contains(out, "paused:          true") || !strings.Contains(out, "queued URIs:     1") {
		t.Fatalf("host: %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, append([]string{"frontier", "pause"}, flags...)...); code != 0 || !strings.Contains(out, "frontier fc-npld paused") {
		t.Fatalf("pause: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, append([]string{"frontier", "stats"}, flags...)...); code != 0 || !strings.Contains(out, "PAUSED") {
		t.Fatalf("stats text: %d\n%s", code, out)
	}
	if code, _, _ := runCLI(t, append([]string{"frontier", "resume"}, flags...)...); code != 0 {
		t.Fatal("resume failed")
	}

	bad := [][]string{
		{"frontier"},
		{"frontier", "nope"},
		{"frontier", "host"},
		append([]string{"frontier", "host", "nosuch.example"}, flags...),
		append([]string{"frontier", "stats", "--crawl", "xx"}, flags...),
	}
	for _, args := range bad {
		if code, _, errOut := runCLI(t, args...); code == 0 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want a failure with a reason", args, code, errOut)
		}
	}
}

// frontier stats says how many URIs wait for a retry and when the first
// is due.
func TestFormatStatsRetries(t *testing.T) {
	var b strings.Builder
	formatStats(&b, frontier.Stats{Queued: 4, RetryHosts: 2, RetryURIs: 4, NextRetry: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)})
	if !strings.Contains(b.String(), "waiting for retry: 4 URIs at 2 hosts, next due 2030-01-02T03:04:05Z") {
		t.Errorf("stats output lacks the retry line:\n%s", b.String())
	}
	b.Reset()
	formatStats(&b, frontier.Stats{Queued: 1})
	if !strings.Contains(b.String(), "waiting for retry: 0 URIs at 0 hosts\n") {
		t.Errorf("stats output without retries:\n%s", b.String())
	}
}

// With frontier.shards set, rebuild spreads the journal over the shards
// and the other verbs see all of them; a tool opening the frontier with
// another count is refused, naming both counts.
func TestFrontierCommandsSharded(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	kc, cl := embeddedtest.Kafka(t, 2)
	var recs []*kgo.Record
	for i := range 12 {
		u := fmt.Sprintf("http://h%d.example/", i)
		b, _ := json.Marshal(messages.Launch{URL: u, Hop: "L", ParentURL: u})
		recs = append(recs, &kgo.Record{Topic: "fc.inscope.npld", Key: []byte("k"), Value: b})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--redis", rdb.Options().Addr, "--log-level", "error"}
	sharded := append([]string{"--set", "frontier.shards=4"}, flags...)
	code, out, errOut := runCLI(t, append([]string{"frontier", "rebuild", "--kafka", strings.Join(kc.Brokers, ",")}, sharded...)...)
	if code != 0 || !strings.Contains(out, "queued again:           12") {
		t.Fatalf("rebuild: exit %d\n%s%s", code, out, errOut)
	}
	if got := rdb.HGet(ctx, frontier.LayoutKey("fc-npld"), "shards").Val(); got != "4" {
		t.Fatalf("recorded shard count %q, want 4", got)
	}
	if keys := rdb.Keys(ctx, "{fc-npld:*}:ready").Val(); len(keys) < 2 {
		t.Fatalf("rebuilt hosts did not spread over shards: %v", keys)
	}
	code, out, _ = runCLI(t, append([]string{"frontier", "stats", "--json"}, sharded...)...)
	var st frontier.Stats
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Queued != 12 || st.Hosts != 12 {
		t.Fatalf("stats: exit %d, %v, %+v", code, err, st)
	}
	if code, out, _ := runCLI(t, append([]string{"frontier", "host", "h7.example"}, sharded...)...); code != 0 || !strings.Contains(out, "queued URIs:     1") {
		t.Fatalf("host: %d\n%s", code, out)
	}
	for _, args := range [][]string{{"frontier", "stats"}, {"frontier", "pause"}} {
		code, _, errOut := runCLI(t, append(args, flags...)...)
		if code == 0 || !strings.Contains(errOut, "created with 4 shards, opened with 1") {
			t.Errorf("%v with one shard: exit %d, stderr %q; want the layout refused", args, code, errOut)
		}
	}
}
