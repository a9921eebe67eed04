package scope

import (
	"context"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/geolocate"
	"github.com/trawler-crawl/trawler/pkg/geolocate/geotest"
	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// countingResolver counts lookups reaching the synthetic web's resolver.
type countingResolver struct {
	geolocate.Resolver
	n atomic.Int64
}

func (r *countingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.n.Add(1)
	return r.Resolver.LookupNetIP(ctx, network, host)
}

// TestExternalGeoLocation runs the domain crawl's GB rule against hosts of
// the synthetic web (127.0.0.2 is placed in GB, 127.0.0.3 in FR, 127.0.0.4
// nowhere) with a database written for the test.
func TestExternalGeoLocation(t *testing.T) {
	site, err := testweb.Generate(testweb.Config{Seed: 3, Hosts: 3, PagesPerHost: 5})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	hosts := srv.HostNames()
	dir := t.TempDir()
	geotest.WriteDB(t, dir, "GeoLite2-City.mmdb", map[string]string{"127.0.0.2/32": "GB", "127.0.0.3/32": "FR"})
	res := &countingResolver{Resolver: srv.Resolver()}

	cfg := scopeFromYAML(t, `rules:
- rule: RejectDecideRule
- rule: ExternalGeoLocationDecideRule
  countryCodes: [GB]
  database: GeoLite2-City.mmdb
`)
	e := newEngine(t, cfg, Options{BaseDir: dir, Resolver: res})
	tests := []struct {
		url  string
		want string
		ann  []string
	}{
		{"http://" + hosts[0] + "/page", "ACCEPT by rule #2 ExternalGeoLocationDecideRule", []string{"geo:GB"}},
		{"https://" + hosts[0] + ":8443/other", "ACCEPT by rule #2 ExternalGeoLocationDecideRule", []string{"geo:GB"}},
		{"http://" + hosts[1] + "/", "REJECT by rule #1 RejectDecideRule", []string{"geo:FR"}},
		{"http://" + hosts[2] + "/", "REJECT by rule #1 RejectDecideRule", nil},
		{"http://unresolvable.invalid/", "REJECT by rule #1 RejectDecideRule", nil},
		{"http://127.0.0.2/ip-literal", "ACCEPT by rule #2 ExternalGeoLocationDecideRule", []string{"geo:GB"}},
	}
	for _, tc := range tests {
		d := e.Decide(context.Background(), candidate(t, tc.url, "", "L", false))
		if d.String() != tc.want || !slices.Equal(d.Annotations, tc.ann) {
			t.Errorf("%s: %s %q, want %s %q", tc.url, d, d.Annotations, tc.want, tc.ann)
		}
	}
	before := res.n.Load()
	for range 5 {
		e.Decide(context.Background(), candidate(t, "http://"+hosts[0]+"/again", "", "L", false))
		e.Decide(context.Background(), candidate(t, "http://unresolvable.invalid/again", "", "L", false))
	}
	if res.n.Load() != before {
		t.Fatalf("%d more lookups: hosts are not cached", res.n.Load()-before)
	}

	// lookupEveryUri: false skips the lookup once a URI is accepted, so
	// it gets no annotation; the default (true) always runs the rule, which
	// then also becomes the deciding one.
	for _, tc := range []struct {
		every, want string
		ann         []string
	}{
		{"false", "ACCEPT by rule #1 AcceptDecideRule", nil},
		{"true", "ACCEPT by rule #2 ExternalGeoLocationDecideRule", []string{"geo:GB"}},
	} {
		cfg := scopeFromYAML(t, `rules:
- rule: AcceptDecideRule
- {rule: ExternalGeoLocationDecideRule, countryCodes: [GB], database: GeoLite2-City.mmdb, lookupEveryUri: `+tc.every+`}
`)
		e := newEngine(t, cfg, Options{BaseDir: dir, Resolver: res})
		d := e.Decide(context.Background(), candidate(t, "http://"+hosts[0]+"/", "", "L", false))
		if d.String() != tc.want || !slices.Equal(d.Annotations, tc.ann) {
			t.Errorf("lookupEveryUri %s: %s %q, want %s %q", tc.every, d, d.Annotations, tc.want, tc.ann)
		}
	}
}
