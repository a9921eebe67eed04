// Package scope decides whether a discovered URI belongs to the crawl, with
// Heritrix3's decide rules (ARCHITECTURE.md 9).
//
// A scope is the ordered rule list of a profile's scope section. Each rule
// answers ACCEPT, REJECT or PASS and the last non-PASS answer wins; only
// ACCEPT admits. The decision names the deciding rule by its 1-based number
// in profile order and its Heritrix class name — "ACCEPT by rule #2
// SurtPrefixedDecideRule" — which the worker records as
// extra_info.scopeDecision. After the rules, the excluded-SURTs file
// rejects whatever it covers; Engine.Excluded answers the same question
// again at fetch time.
//
// Per-URI thresholds (maxHops, maxTransHops, maxSpeculativeHops,
// maxPathDepth, maxRepetitions) come with each Candidate as Params, read
// from the effective profile of that URI, so sheets can change them. The
// rule list itself is fixed when the Engine is built.
//
// SURT prefixes come from three places: inline lists and watched files in
// the profile (reloaded within a poll interval, a bad reload keeping the
// previous set), and the crawl's seeds (Seeds), shared through Redis so a
// seed launched through any worker widens every worker's scope. How much
// a seed admits (its implied prefix, only itself, plus one hop, or its
// whole domain) is fixed when it is added, from the launcher's
// resourceScope, plus1Scope and subdomainsScope sheets: see SeedScope.
//
// A profile's scope section, e.g. for a domain crawl:
//
//	scope:
//	  maxHops: 20                # per URI: sheets may override
//	  maxPathDepth: 15
//	  excludedSurtsFile: exclude.txt   # final REJECT, watched
//	  rules:                     # numbered from 1 in decisions
//	  - rule: RejectDecideRule
//	  - rule: SurtPrefixedDecideRule   # seeds, plus the listed domains
//	    surts: ['+uk', '+scot', '+wales', '+cymru', '+london']
//	  - rule: ExternalGeoLocationDecideRule
//	    countryCodes: [GB]
//	    database: /geoip/GeoLite2-City.mmdb
//	  - rule: TooManyHopsDecideRule
//	  - {rule: MatchesListRegexDecideRule, decision: REJECT, regexList: ['^.{512,}$']}
//	  - rule: PrerequisiteAcceptDecideRule
//
// Engine, Seeds and PrefixSet are safe for concurrent use: readers load
// immutable snapshots through atomic pointers and never block on reloads.
package scope
