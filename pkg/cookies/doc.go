// Package cookies is an RFC 6265 cookie jar for stateless crawl workers.
//
// Heritrix keeps its cookies in a BDB store inside the one crawler process;
// Trawler's workers are interchangeable, so whichever worker claims a host
// next must send the cookies an earlier worker received. The jar therefore
// keeps nothing in memory: cookies live in Redis, one hash per registrable
// domain (eTLD+1 by the public suffix list; IP addresses and hosts that are
// themselves public suffixes or single labels key by host), with one field
// per cookie identity (name;domain;path). Every cookie a host can receive is
// under that host's key, so a lookup is one HGETALL, and a write is one
// script call that also drops expired cookies and, past the per-domain cap,
// the oldest ones.
//
// Matching follows RFC 6265 section 5: host-only versus Domain cookies,
// Domain attributes that are public suffixes or do not domain-match the
// request host are rejected, path-match, Secure cookies are sent on https
// only, Max-Age wins over Expires and a past expiry deletes. Cookies are
// returned longest path first, then oldest first. Unlike a browser the jar
// does not track last-access times (that would make every read a write), so
// eviction drops the oldest by creation time.
//
// Errors from Redis are logged, never returned, because a fetch must go on
// without cookies rather than fail; cookie values are never logged, since
// they are often session secrets.
package cookies
