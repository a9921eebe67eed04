package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/geolocate/geotest"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// A host that only the domain crawl's GeoIP rule admits is resolved by that
// rule when its seed is scoped, before anything of it is fetched. Its first
// fetch must still write its dns: capture, exactly once, as for any host.
func TestGeoScopedHostGetsItsDNSRecord(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	seed := e.srv.Seeds()[0]
	host := hostOf(seed)
	ips, err := e.srv.Resolver().LookupIPAddr(ctx, host)
	if err != nil || len(ips) == 0 {
		t.Fatalf("synthetic web resolves %s to %v (%v)", host, ips, err)
	}
	dir := t.TempDir()
	db := geotest.WriteDB(t, t.TempDir(), "GeoLite2-City.mmdb", map[string]string{ips[0].IP.String() + "/32": "GB"})

	p := profile.Default()
	scopeYAML := fmt.Sprintf("scope:\n  rules:\n  - rule: RejectDecideRule\n"+
		"  - {rule: ExternalGeoLocationDecideRule, countryCodes: [GB], database: %q}\n", db)
	if err := profile.Decode(strings.NewReader(scopeYAML), &p); err != nil {
		t.Fatal(err)
	}
	p.Politeness = profile.Politeness{MaxDelayMs: 5}
	p.Fetch.AllowPrivateAddresses = true
	w, err := New(Config{Crawl: "fc", Stream: "npld", ID: "w1", Threads: 4, DataDir: dir, Lease: time.Minute},
		Deps{Profile: p, Kafka: e.kc, Redis: e.rdb, Resolver: e.srv.Resolver(),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: prometheus.NewRegistry(), Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(messages.Launch{URL: seed, IsSeed: true, ParentURL: seed,
		ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:" + seed}}})
	if err := e.cl.ProduceSync(ctx, &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte(host), Value: b}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })

	waitEvents(t, e, func(evs []messages.Crawled) bool {
		return count(evs, func(ev messages.Crawled) bool { return ev.URL == seed && ev.StatusCode == 200 }) == 1
	})
	waitDrained(t, w, 0, "not drained before the deadline", "")
	evs := crawledEvents(t, e)
	var dnsEvents []messages.Crawled
	for _, ev := range evs {
		if ev.URL == "dns:"+host {
			dnsEvents = append(dnsEvents, ev)
		}
		if ev.URL == seed && !strings.Contains(ev.Annotations, "geo:GB") {
			t.Errorf("seed annotations %q: the GeoIP rule did not locate it", ev.Annotations)
		}
	}
	if len(dnsEvents) != 1 {
		t.Fatalf("%d dns:%s events, want 1 (the GeoIP rule's lookup must not take the host's dns: record)", len(dnsEvents), host)
	}
	if ev := dnsEvents[0]; ev.StatusCode != 1 || ev.WarcFilename == nil || ev.Mimetype != "text/dns" {
		t.Errorf("dns event: status %d, mime %q, warc %v; want 1, text/dns, a WARC record", ev.StatusCode, ev.Mimetype, ev.WarcFilename)
	}
}

// The profile's warc.version reaches the worker's WARC writer: the default
// WARC/1.0 with 14-digit dates, or WARC/1.1 with milliseconds.
func TestProfileWARCVersion(t *testing.T) {
	for _, tc := range []struct {
		version, line string
		date          *regexp.Regexp
	}{
		{"1.0", "WARC/1.0", regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)},
		{"1.1", "WARC/1.1", regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)},
	} {
		t.Run(tc.version, func(t *testing.T) {
			e := setup(t)
			ctx := context.Background()
			seed := e.srv.Seeds()[0]
			dir := t.TempDir()
			p := profile.Default()
			p.Politeness = profile.Politeness{MaxDelayMs: 5}
			p.Fetch.AllowPrivateAddresses = true
			if err := p.Set("warc.version", tc.version); err != nil {
				t.Fatal(err)
			}
			w, err := New(Config{Crawl: "fc", Stream: "npld", ID: "w1", Threads: 4, DataDir: dir, Lease: time.Minute},
				Deps{Profile: p, Kafka: e.kc, Redis: e.rdb, Resolver: e.srv.Resolver(),
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: prometheus.NewRegistry(), Version: "t"})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(messages.Launch{URL: seed, IsSeed: true, ParentURL: seed,
				ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:" + seed}}})
			if err := e.cl.ProduceSync(ctx, &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte("k"), Value: b}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- w.Run(runCtx) }()
			stop := sync.OnceFunc(func() { cancel(); <-done })
			t.Cleanup(stop)
			waitEvents(t, e, func(evs []messages.Crawled) bool {
				return count(evs, func(ev messages.Crawled) bool { return ev.URL == seed && ev.StatusCode == 200 }) == 1
			})
			// Read only once the worker has stopped and closed its WARCs:
			// gowarc's reader and writer both write a global of
			// github.com/google/uuid, a race the writer's own lock cannot
			// cover from here.
			stop()
			var ev messages.Crawled
			for _, c := range crawledEvents(t, e) {
				if c.URL == seed {
					ev = c
				}
			}
			if ev.WarcFilename == nil || ev.WarcOffset == nil {
				t.Fatalf("%s: event has no WARC location", seed)
			}
			path := filepath.Join(dir, "warcs", "fc-npld", *ev.WarcFilename)
			r, err := warcwriter.OpenReader(path, *ev.WarcOffset)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = r.Close() }()
			rec, _, _, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = rec.Close() }()
			if got := rec.Version().String(); got != tc.line {
				t.Errorf("version %s, want %s", got, tc.line)
			}
			if got := rec.WarcHeader().Get(gowarc.WarcDate); !tc.date.MatchString(got) {
				t.Errorf("WARC-Date %q does not match %s", got, tc.date)
			}
			if got := rec.WarcHeader().Get(gowarc.ContentType); got != "application/http; msgtype=response" {
				t.Errorf("Content-Type %q", got)
			}
		})
	}
}
