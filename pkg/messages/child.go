package messages

import (
	"encoding/json"
	"time"
)

// Annotations of render hand-off (ARCHITECTURE.md 4.1, 4.3).
const (
	// AnnotationWebRenderThis marks a launch whose URI is rendered in a
	// browser instead of fetched (UKWA's launcher writes it).
	AnnotationWebRenderThis = "WebRenderThis"
	// AnnotationRenderFailed marks a URI the renderer gave back after its
	// render failed: the worker fetches it plainly and does not hand it
	// off again; the annotation reaches the crawl.log line.
	AnnotationRenderFailed = "renderFailed"
)

// ChildLaunch builds the launch message for a link found in parent.
func ChildLaunch(parent Launch, link, hop string, now time.Time) Launch {
	return Launch{
		URL: link, Method: "GET", Hop: hop, ParentURL: parent.URL,
		ParentURLMetadata: ParentMetadata{
			PathFromSeed:  parent.HopPath(),
			HeritableData: inheritData(parent.ParentURLMetadata.HeritableData, len(parent.HopPath())+len(hop)),
		},
		Timestamp: now.UTC().Format("2006-01-02T15:04:05.000"),
	}
}

// inheritData copies the keys the parent lists as heritable, as Heritrix's
// HeritableData does; source and the list itself always pass down. The
// launch timestamp also passes to URIs within the launch's refreshDepth
// hops of the seed (UKWA's refresh semantics: a launch makes the seed and
// its near outlinks due again), depth being the child's hops.
func inheritData(h HeritableData, depth int) HeritableData {
	out := HeritableData{Source: h.Source, Heritable: h.Heritable}
	if h.RefreshDepth != nil && depth <= *h.RefreshDepth {
		out.LaunchTimestamp = h.LaunchTimestamp
	}
	for _, k := range h.Heritable {
		switch k {
		case "refreshDepth":
			out.RefreshDepth = h.RefreshDepth
		case "launchTimestamp":
			out.LaunchTimestamp = h.LaunchTimestamp
		case "annotations":
			out.Annotations = h.Annotations
		case "source", "heritable":
		default:
			if v, ok := h.Extra[k]; ok {
				if out.Extra == nil {
					out.Extra = map[string]json.RawMessage{}
				}
				out.Extra[k] = v
			}
		}
	}
	return out
}
