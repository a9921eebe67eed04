package cdx

import (
	"strings"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

// ExtraLocation is the crawled event's extra_info key for a 3xx response's
// Location, resolved against the URL (a Trawler convention: Heritrix's
// event has no such field). It lets the live index fill the redirect field
// the offline indexer reads from the record.
const ExtraLocation = "location"

// AbsoluteRedirect resolves a Location against the URL that answered with
// it, as the crawler resolves it to follow the redirect (pkg/uri, the
// WHATWG rules), so the redirect field names the URL a replay tool looks
// up next; relative Locations are common. A Location that does not
// resolve is kept as sent, trimmed, unless it holds white space, which no
// field of a space-separated CDX line can: then the field stays empty.
func AbsoluteRedirect(base, location string) string {
	location = strings.TrimSpace(location)
	if location == "" {
		return ""
	}
	if abs, err := uri.Resolve(base, location); err == nil {
		location = abs
	}
	if strings.ContainsAny(location, " \t\r\n") {
		return ""
	}
	return location
}

// eventRedirect is the redirect field of a 3xx event: its extra_info
// location, resolved in case another producer sent it relative.
func eventRedirect(ev messages.Crawled) string {
	if ev.StatusCode < 300 || ev.StatusCode > 399 {
		return ""
	}
	loc, _ := ev.ExtraInfo[ExtraLocation].(string)
	return AbsoluteRedirect(ev.URL, loc)
}
