package metawarc

import (
	"net/url"
	"strings"
)

// Authority is the authority of Trawler's metadata URIs, as
// "netarkivet.dk" is NetarchiveSuite's.
const Authority = "trawler.crawl"

// Record kinds and names, NetarchiveSuite's paths: crawl/logs,
// crawl/reports, crawl/index, crawl/setup.
const (
	PathCrawlLog   = "crawl/logs/crawl.log"
	PathReports    = "crawl/reports/"
	PathStatsJSON  = "crawl/reports/harvest-statistics.json"
	PathStatsText  = "crawl/reports/harvest-statistics.txt"
	PathCDX        = "crawl/index/cdx"
	PathProfile    = "crawl/setup/profile.yaml"
	PathSheets     = "crawl/setup/sheets.yaml"
	PathSeeds      = "crawl/setup/seeds.txt"
	paramCrawl     = "crawl"
	paramSource    = "source"
	paramLaunch    = "launch"
	paramGenerator = "generator"
)

// URI is the metadata:// URI of a record at path for one launch:
//
//	metadata://trawler.crawl/<path>?crawl=<crawl>&launch=<ts>&source=<tag>
//
// with the query escaped and its keys in that order, so a URI can be
// rebuilt from a launch and compared.
func URI(path, crawl, source, launchTS string) string {
	q := url.Values{}
	q.Set(paramCrawl, crawl)
	q.Set(paramLaunch, launchTS)
	q.Set(paramSource, source)
	// url.Values.Encode sorts keys: crawl, launch, source.
	return "metadata://" + Authority + "/" + strings.TrimPrefix(path, "/") + "?" + q.Encode()
}
