// Package geolocate maps hosts to countries with a MaxMind GeoIP2 or
// GeoLite2 database, for the scope rule that accepts servers located in
// a given country (the UK Web Archive's domain crawl accepts GB) and for
// the geo:CC annotation.
//
// DB wraps the database; Locator resolves a host through an injected
// resolver, looks its first address up and caches the answer per host, so
// a crawl resolves each host once per TTL rather than once per URI.
package geolocate

import (
	"fmt"
	"net/netip"

	"github.com/oschwald/geoip2-golang/v2"
)

// DB is an open GeoIP2/GeoLite2 City or Country database. It is safe for
// concurrent use.
type DB struct {
	r    *geoip2.Reader
	path string
}

// Open opens a database file (memory-mapped).
func Open(path string) (*DB, error) {
	r, err := geoip2.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open geoip database %s: %w", path, err)
	}
	// Fail now rather than on the first lookup if the file is, say, an ASN
	// database, which has no country data.
	if _, err := r.Country(netip.IPv4Unspecified()); err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("geoip database %s: no country lookups: %w", path, err)
	}
	return &DB{r: r, path: path}, nil
}

// Country returns the ISO 3166-1 alpha-2 code of the country the address
// is located in, or "" when the database does not know it.
func (d *DB) Country(ip netip.Addr) (string, error) {
	c, err := d.r.Country(ip.Unmap())
	if err != nil {
		return "", fmt.Errorf("geoip lookup %s in %s: %w", ip, d.path, err)
	}
	return c.Country.ISOCode, nil
}

// Close releases the database.
func (d *DB) Close() error {
	if err := d.r.Close(); err != nil {
		return fmt.Errorf("close geoip database %s: %w", d.path, err)
	}
	return nil
}
