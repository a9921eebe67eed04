package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// /harveststats lists the launches the provenance role recorded, and
// answers one launch's statistics with each domain's stop reason; an
// unknown launch is a 404.
func TestHarvestStatsEndpoint(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	store := harveststats.New(rdb, "fc", nil)
	src := "tid:7:http://a.example/"
	evs := []messages.Crawled{
		{Timestamp: "2024-01-17T09:00:00.000Z", URL: "http://a.example/", StatusCode: 200, Size: messages.Int64(10), Seed: src,
			Annotations: "launchTimestamp:20240117090000"},
		{Timestamp: "2024-01-17T09:00:01.000Z", URL: "http://a.example/x", StatusCode: -5003, Seed: src, Annotations: "Q:hostMaxFetchSuccesses"},
	}
	ctx := context.Background()
	if err := store.Record(ctx, evs); err != nil {
		t.Fatal(err)
	}
	l := harveststats.Launch{Source: src, Timestamp: "20240117090000"}
	if err := store.Seal(ctx, l, harveststats.StateCompleted); err != nil {
		t.Fatal(err)
	}
	h := Handler(Deps{Crawl: "fc", HarvestStats: store})
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	var list []LaunchState
	if rec := get("/api/v1/harveststats"); rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &list) != nil ||
		len(list) != 1 || list[0].Launch != l || list[0].State != harveststats.StateCompleted {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	q := url.Values{"source": {src}, "launch": {l.Timestamp}}
	var st harveststats.LaunchStats
	rec := get("/api/v1/harveststats?" + q.Encode())
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &st) != nil || len(st.Domains) != 1 ||
		st.Domains[0].StopReason != (harveststats.StopReason{Code: harveststats.ReasonQuota, Detail: "hostMaxFetchSuccesses"}) {
		t.Fatalf("one launch: %d %s", rec.Code, rec.Body)
	}
	q.Set("launch", "20990101000000")
	if rec := get("/api/v1/harveststats?" + q.Encode()); rec.Code != 404 {
		t.Errorf("unknown launch: %d %s", rec.Code, rec.Body)
	}
	if rec := httptest.NewRecorder(); true {
		Handler(Deps{Crawl: "fc"}).ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/harveststats", nil))
		if rec.Code != 503 {
			t.Errorf("without a store: %d", rec.Code)
		}
	}
}
