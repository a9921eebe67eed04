// Package beanpath maps Heritrix3 and UK Web Archive bean paths
// ("disposition.minDelayMs", "queueAssignmentPolicy.parallelQueues") onto
// Trawler's dotted profile keys, so sheets written for Heritrix, and the
// targetSheet overrides launch messages carry, keep working.
//
// The names come from the bean ids of ukwa-heritrix's
// jobs/frequent/crawler-beans.cxml and sheets.xml (which follow Heritrix's
// profile-crawler-beans.cxml). It is a leaf package so that pkg/profile can
// check sheet keys without importing pkg/sheets.
package beanpath

import (
	"errors"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// NoMaxHops is the scope.maxHops that stands for "no hop limit", what
// UKWA's noMaxHops sheet means by switching the TooManyHops rule off
// (hopsCountReject.enabled: false).
const NoMaxHops = -1

// Alias is what one bean path means in Trawler.
type Alias struct {
	// Target is the dotted profile key; "" when the path has no Trawler
	// equivalent (Note then says why).
	Target string
	// Convert maps the Heritrix value onto Target's where units or types
	// differ; nil copies the value. A nil result with a note means this
	// value has no effect.
	Convert func(v *yaml.Node) (*yaml.Node, string, error)
	Note    string
}

// Lookup returns the alias for a bean path. Beans whose properties have
// Trawler's names (quotaEnforcer, crawlLimiter, disposition) map whole;
// whether the property exists is for the caller to check against the
// profile.
func Lookup(path string) (Alias, bool) {
	bean, prop, ok := strings.Cut(path, ".")
	if !ok || prop == "" {
		return Alias{}, false
	}
	switch bean {
	case "quotaEnforcer":
		return Alias{Target: "quotas." + prop}, true
	case "crawlLimiter":
		return Alias{Target: "limits." + prop}, true
	case "disposition":
		if prop == "maxPerHostBandwidthUsageKbSec" {
			return Alias{Target: "frontier." + prop}, true
		}
		return Alias{Target: "politeness." + prop}, true
	}
	return property(path)
}

// seedScopeNote explains why UKWA's plus-one and subdomain switches have no
// per-URI effect: those scopes are about URIs outside the seed's prefix,
// which a sheet attached there never reaches, so pkg/scope fixes a seed's
// scope when the seed is added, from the names of its launch sheets
// (scope.SeedScopeFromSheets).
const seedScopeNote = "a seed's plus-one or subdomain scope is fixed when the seed is added, from the sheet's name (pkg/scope SeedScopeFromSheets)"

// property holds the aliases that map one property at a time.
func property(path string) (Alias, bool) {
	switch path {
	case "queueAssignmentPolicy.parallelQueues":
		return Alias{Target: "frontier.parallelQueues"}, true
	case "queueAssignmentPolicy.parallelQueuesRandomAssignment", "queueAssignmentPolicy.deferToPrevious",
		"queueAssignmentPolicy.forceQueueAssignment":
		return Alias{Note: "Trawler keys queues by host and spreads a host's parallel queues itself"}, true
	case "metadata.robotsPolicyName":
		return Alias{Target: "robots.policy"}, true
	case "preconditions.robotsValidityDurationSeconds":
		return Alias{Target: "robots.validityDurationSeconds"}, true
	case "preconditions.ipValidityDurationSeconds":
		return Alias{Target: "dns.ipValidityDurationSeconds"}, true
	case "fetchHttp.maxLengthBytes", "fetchHttp.ignoreCookies":
		return Alias{Target: "fetch." + strings.TrimPrefix(path, "fetchHttp.")}, true
	case "fetchHttp.timeoutSeconds":
		return Alias{Target: "fetch.totalTimeoutSeconds"}, true
	case "fetchHttp.soTimeoutMs":
		return Alias{Target: "fetch.readTimeoutSeconds", Convert: msToSeconds}, true
	case "preparer.preferenceDepthHops":
		return Alias{Target: "frontier.preferenceDepthHops"}, true
	case "recentlySeen.recrawlInterval":
		return Alias{Target: "frontier.recrawlInterval"}, true
	case "hopsCountReject.maxHops":
		return Alias{Target: "scope.maxHops"}, true
	case "hopsCountReject.enabled":
		return Alias{Target: "scope.maxHops", Convert: hopsRuleEnabled}, true
	case "extractorHtml.ignoreFormActionUrls":
		return Alias{Target: "extract.ignoreFormActionUrls"}, true
	case "extractorHtml.extractJavascript", "extractorJs.enabled":
		return Alias{Target: "extract.javascript"}, true
	case "extractorHtml.extractValueAttributes":
		return Alias{Note: "Trawler does not take URLs from form value attributes"}, true
	case "wrenderHttp.enabled":
		return Alias{Target: "render.handOff"}, true
	case "candidates.seedsRedirectNewSeeds":
		return Alias{Target: "scope.seedsRedirectNewSeeds"}, true
	case "surtPrefixSeedScope.alsoCheckVia", "onDomainAccept.enabled":
		return Alias{Note: seedScopeNote}, true
	}
	return Alias{}, false
}

func hopsRuleEnabled(v *yaml.Node) (*yaml.Node, string, error) {
	on, err := boolValue(v)
	if err != nil {
		return nil, "", err
	}
	if on {
		return nil, "the hop limit applies unless a sheet lifts it", nil
	}
	return intNode(NoMaxHops), "", nil
}

func msToSeconds(v *yaml.Node) (*yaml.Node, string, error) {
	var ms int64
	if err := v.Decode(&ms); err != nil || ms < 0 {
		return nil, "", errors.New("want a number of milliseconds >= 0")
	}
	return intNode((ms + 999) / 1000), "", nil
}

func boolValue(v *yaml.Node) (bool, error) {
	var b bool
	if err := v.Decode(&b); err != nil {
		return false, errors.New("want true or false")
	}
	return b, nil
}

func intNode[T int | int64](n T) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(n), 10)}
}
