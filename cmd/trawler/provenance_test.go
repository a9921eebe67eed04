package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

func TestProvenanceStats(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	src := "tid:3:http://q.example/"
	evs := []messages.Crawled{
		{Timestamp: "2024-01-17T09:00:01.000Z", URL: "http://q.example/", StatusCode: 200, Seed: src, Annotations: "launchTimestamp:20240117090000"},
		{Timestamp: "2024-01-17T09:00:02.000Z", URL: "http://q.example/x", StatusCode: -5003, Seed: src, Annotations: "Q:hostMaxFetchSuccesses"},
	}
	if err := harveststats.New(rdb, "fc", nil).Record(ctx, evs); err != nil {
		t.Fatal(err)
	}
	addr := rdb.Options().Addr
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"list", []string{"stats", "--redis", addr}, "20240117090000 running " + src},
		{"launch", []string{"stats", "--redis", addr, "--source", src, "--launch", "20240117090000"}, "q.example 2 1 0 0 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if err := runProvenance(ctx, tc.args, &out, &errb); err != nil {
				t.Fatalf("%v: %s", err, errb.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("output:\n%s\nwant it to contain %q", out.String(), tc.want)
			}
		})
	}
	var out bytes.Buffer
	if err := runProvenance(ctx, []string{"stats", "--redis", addr, "--source", src, "--launch", "20240117090000", "--json"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	var st harveststats.LaunchStats
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if r := st.Domains[0].StopReason; r.Code != harveststats.ReasonQuota || r.Detail != "hostMaxFetchSuccesses" {
		t.Errorf("stop reason %+v", r)
	}
	if err := runProvenance(ctx, []string{"stats", "--redis", addr, "--source", "nope"}, &out, &out); err == nil {
		t.Error("unknown launch: no error")
	}
}
