package scope

import (
	"context"

	"github.com/trawler-crawl/trawler/pkg/geolocate"
)

// hostLocator is what the geolocation rule needs from geolocate.Locator.
type hostLocator interface {
	HostCountry(ctx context.Context, host string) (string, error)
}

// geoRule is ExternalGeoLocationDecideRule: it matches URIs whose host
// resolves to an address located in one of the configured countries, and
// annotates every located URI with geo:CC (UKWA's CountryCodeAnnotator),
// whether or not the country matched. A host that does not resolve
// matches nothing.
//
// In the worker the rule resolves through the fetch chain's DNS cache
// (pkg/dns), which leaves a lookup made here to be recorded by the host's
// first fetch: scoping a host first must not cost it its dns: record.
type geoRule struct {
	predicate
	locator   hostLocator
	countries map[string]bool
}

func (r *geoRule) decide(ctx context.Context, c *Candidate, _ *Params, st *evalState) Result {
	host := c.host()
	if host == "" {
		return Pass
	}
	cc, err := r.locator.HostCountry(ctx, host)
	if err != nil || cc == "" {
		return Pass
	}
	st.annotations = append(st.annotations, "geo:"+cc)
	return r.answer(r.countries[cc])
}

var _ hostLocator = (*geolocate.Locator)(nil)
