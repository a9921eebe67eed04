package messages

import (
	"encoding/json"
	"slices"
)

// The launch a URI belongs to. The launch timestamp reaches only the URIs
// within refreshDepth hops of the seed (it is what makes them due again),
// so a URI found deeper cannot say which launch found it, and provenance
// (harvest statistics, a launch's crawl.log lines) would have to guess by
// time. The worker therefore stamps each launch message it takes in with
// a heritable launchId: every URI discovered from it inherits the key
// through Heritrix's heritable mechanism (listed in "heritable"), and every
// crawled event names it in extra_info. The launcher's messages stay as
// UKWA's launcher writes them; an older producer's URIs without the key
// fall back to the time rule.
const (
	// HeritableLaunchID is the heritableData key of the launch id.
	HeritableLaunchID = "launchId"
	// ExtraLaunchID is the crawled event's extra_info key of the launch id.
	ExtraLaunchID = "launchId"
)

// LaunchID is the 14-digit launch timestamp of the launch the URI belongs
// to: the heritable launchId, else the launch timestamp it carries itself
// (a seed, or a URI within the refresh depth); "" when there is neither.
func (l Launch) LaunchID() string {
	if raw, ok := l.ParentURLMetadata.HeritableData.Extra[HeritableLaunchID]; ok {
		var id string
		if json.Unmarshal(raw, &id) == nil && len(id) == 14 {
			return id
		}
	}
	return l.LaunchTimestamp()
}

// StampLaunchID makes the URI's launch heritable: when it has a launch
// timestamp and no launch id yet, the timestamp becomes its launchId and
// the key joins the heritable list, so every URI discovered from it
// carries it. It reports whether it changed the message.
func (l *Launch) StampLaunchID() bool {
	hd := &l.ParentURLMetadata.HeritableData
	if _, ok := hd.Extra[HeritableLaunchID]; ok {
		return false
	}
	ts := l.LaunchTimestamp()
	if len(ts) != 14 {
		return false
	}
	raw, err := json.Marshal(ts)
	if err != nil {
		return false
	}
	extra := make(map[string]json.RawMessage, len(hd.Extra)+1)
	for k, v := range hd.Extra {
		extra[k] = v
	}
	extra[HeritableLaunchID] = raw
	hd.Extra = extra
	if !slices.Contains(hd.Heritable, HeritableLaunchID) {
		// A copy: the list may be shared with the message it was decoded
		// alongside (a batch of siblings).
		hd.Heritable = append(slices.Clip(hd.Heritable), HeritableLaunchID)
	}
	return true
}

// LaunchID is the launch id the event's URI carried (extra_info
// launchId); "" for an event from a producer that does not set it.
func (c Crawled) LaunchID() string {
	if id, ok := c.ExtraInfo[ExtraLaunchID].(string); ok && len(id) == 14 {
		return id
	}
	return ""
}
