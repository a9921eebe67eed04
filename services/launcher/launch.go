package launcher

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Formats of the times in a launch message.
const (
	// LaunchTimestampLayout is the 14-digit UTC form of launchTimestamp.
	LaunchTimestampLayout = "20060102150405"
	// MessageTimestampLayout is the ISO-8601 form of the message timestamp,
	// in UTC without a zone, as UKWA's launcher writes it (ARCHITECTURE.md
	// 4.1: no zone means UTC). Java readers parse it as a LocalDateTime.
	MessageTimestampLayout = "2006-01-02T15:04:05.000000"
)

// Names used in launch messages.
const (
	AnnotationResetQuotas   = "resetQuotas"
	AnnotationWebRenderThis = messages.AnnotationWebRenderThis
	// launchTSKey is the UK Web Archive launcher's name for the launch
	// timestamp in heritableData, kept for consumers that still read it.
	launchTSKey = "launch_ts"
)

// LaunchOptions tune BuildLaunches.
type LaunchOptions struct {
	// RenderTargets holds the ids of targets whose seeds are annotated
	// WebRenderThis, besides targets whose feed line sets "webrender".
	RenderTargets map[int64]bool
	// RefreshDepth is how many hops from a seed inherit its launch
	// timestamp and so are refetched; zero means 1.
	RefreshDepth int
	// SentAt is the message timestamp; zero means the launch time.
	SentAt time.Time
}

// BuildLaunches returns one launch message per seed of t, launched at at
// (ARCHITECTURE.md 4.1): a forced GET of the seed, tagged with the target
// as its source, carrying the launch timestamp so the seed and its near
// outlinks are refetched, and the sheets for the target's settings.
//
// Every seed of a target carries the same source tag, SourceTag(t):
// "tid:<id>:<first seed>", as UKWA's launcher writes it, so quotas,
// reports and the document harvester group a target's URLs together
// whichever seed led to them.
func BuildLaunches(t Target, at time.Time, o LaunchOptions) ([]messages.Launch, error) {
	if len(t.Seeds) == 0 {
		return nil, fmt.Errorf("target %d: no seeds", t.ID)
	}
	if at.IsZero() {
		return nil, fmt.Errorf("target %d: no launch time", t.ID)
	}
	refresh := o.RefreshDepth
	switch {
	case refresh == 0:
		refresh = 1
	case refresh < 0:
		return nil, fmt.Errorf("target %d: negative refresh depth %d", t.ID, refresh)
	}
	sent := o.SentAt
	if sent.IsZero() {
		sent = at
	}
	ts := at.UTC().Format(LaunchTimestampLayout)
	tsJSON, err := json.Marshal(ts)
	if err != nil {
		return nil, fmt.Errorf("target %d: encode launch timestamp: %w", t.ID, err)
	}
	render := t.WebRender || o.RenderTargets[t.ID]
	source := SourceTag(t)
	out := make([]messages.Launch, 0, len(t.Seeds))
	for _, seed := range t.Seeds {
		if err := checkSeed(seed); err != nil {
			return nil, fmt.Errorf("target %d: %w", t.ID, err)
		}
		annotations := []string{AnnotationResetQuotas, "launchTimestamp:" + ts}
		if render {
			annotations = append(annotations, AnnotationWebRenderThis)
		}
		depth := refresh
		out = append(out, messages.Launch{
			URL:        seed,
			Method:     "GET",
			IsSeed:     true,
			ForceFetch: true,
			Hop:        "",
			ParentURL:  seed,
			ParentURLMetadata: messages.ParentMetadata{
				PathFromSeed: "",
				HeritableData: messages.HeritableData{
					Source:          source,
					Heritable:       []string{"source", "heritable", "refreshDepth"},
					RefreshDepth:    &depth,
					LaunchTimestamp: ts,
					Annotations:     annotations,
					Extra:           map[string]json.RawMessage{launchTSKey: tsJSON},
				},
			},
			Headers:   map[string]string{},
			Sheets:    sheetsFor(t),
			Timestamp: sent.UTC().Format(MessageTimestampLayout),
		})
	}
	return out, nil
}

// SourceTag is the source every URL launched for t inherits:
// "tid:<id>:<first seed>".
func SourceTag(t Target) string {
	if len(t.Seeds) == 0 {
		return fmt.Sprintf("tid:%d:", t.ID)
	}
	return "tid:" + strconv.FormatInt(t.ID, 10) + ":" + t.Seeds[0]
}

// sheetsFor maps a target's settings to the sheets UKWA's profiles define
// (ARCHITECTURE.md 9): robots first, then scope, then depth. Root scope and
// CAPPED depth are the profile defaults and need no sheet.
func sheetsFor(t Target) []string {
	sheets := []string{}
	if t.IgnoreRobotsTxt {
		sheets = append(sheets, "ignoreRobots")
	}
	switch t.Scope {
	case ScopeSubdomains:
		sheets = append(sheets, "subdomainsScope")
	case ScopePlus1:
		// W3ACT sends "plus1"; UKWA's launcher tested for "plus1Scope"
		// and so never attached this sheet.
		sheets = append(sheets, "plus1Scope")
	case ScopeResource:
		sheets = append(sheets, "resourceScope")
	}
	switch t.Depth {
	case DepthCappedLarge:
		sheets = append(sheets, "higherLimit")
	case DepthDeep:
		sheets = append(sheets, "noLimit")
	}
	return sheets
}

// SeedLaunch returns the launch message of a bulk-loaded seed (the domain
// crawl): a GET of a seed tagged with source, with the given sheets and
// WebRenderThis when render is set. Unlike BuildLaunches it forces no
// fetch and carries no launch timestamp: a domain crawl admits each URL
// once (its seen filter), and a seed already crawled need not be
// refetched. sent is the message timestamp.
func SeedLaunch(seed, source string, sheets []string, render bool, sent time.Time) messages.Launch {
	var annotations []string
	if render {
		annotations = []string{AnnotationWebRenderThis}
	}
	return messages.Launch{
		URL:       seed,
		Method:    "GET",
		IsSeed:    true,
		ParentURL: seed,
		ParentURLMetadata: messages.ParentMetadata{
			HeritableData: messages.HeritableData{
				Source:      source,
				Heritable:   []string{"source", "heritable"},
				Annotations: annotations,
			},
		},
		Headers:   map[string]string{},
		Sheets:    sheets,
		Timestamp: sent.UTC().Format(MessageTimestampLayout),
	}
}
