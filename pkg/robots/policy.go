package robots

import "github.com/trawler-crawl/trawler/pkg/profile"

// AnnotationExcluded is the annotation (and crawl.log note) of a URI that
// robots.txt excludes; under every enforcing policy such a URI finishes with
// status -9998.
const AnnotationExcluded = "robotExcluded"

// Evaluate applies policy (profile.RobotsObey, ...) to one URI of the site
// whose rules are r. Under obey, classic and robotsTxtOnly, fetch is whether
// robots.txt allows the URI and annotation is AnnotationExcluded when it
// does not. Under calculateRobotsOnly the URI is always fetched but still
// annotated when robots.txt would exclude it (Heritrix's
// calculateRobotsOnly). Under ignore, r is not consulted and may be nil. An
// unknown policy is treated as obey, the safe side; profile validation
// rejects such names before a crawl starts.
func Evaluate(policy string, r *Rules, userAgent, pathAndQuery string) (fetch bool, annotation string) {
	if policy == profile.RobotsIgnore {
		return true, ""
	}
	allowed := r.Allowed(userAgent, pathAndQuery)
	switch {
	case allowed:
		return true, ""
	case policy == profile.RobotsCalculateOnly:
		return true, AnnotationExcluded
	default:
		return false, AnnotationExcluded
	}
}

// ObeyMetaNoFollow reports whether the policy also honours
// <meta name="robots" content="nofollow">: true for obey and classic only,
// as Heritrix's ObeyRobotsPolicy (robotsTxtOnly overrides it to false).
func ObeyMetaNoFollow(policy string) bool {
	return policy == profile.RobotsObey || policy == profile.RobotsClassic
}

// NeedsRobots reports whether robots.txt must be fetched before a URI is
// crawled under policy: false only for ignore. calculateRobotsOnly needs the
// rules to annotate URIs even though it never blocks one.
func NeedsRobots(policy string) bool {
	return policy != profile.RobotsIgnore
}

// FetchFailed reports whether a robots.txt fetch outcome means "failed,
// retry later" rather than an answer to parse: a Heritrix failure status
// (<= 0: DNS, connect, timeout, ...) or a 5xx server error. After its
// retries the caller finishes the waiting URIs with -61.
func FetchFailed(status int) bool {
	return status <= 0 || (status >= 500 && status <= 599)
}
