package qa

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// PatchBounds bound a patch crawl.
type PatchBounds struct {
	// PerPage is the most missing URLs taken from one page; 0 means 50.
	PerPage int
	// PerLaunch is the most taken from one report; 0 means 1000.
	PerLaunch int
	// LaunchID is the launch the patch URLs join (heritableData
	// launchId, a 14-digit timestamp), so their captures count in it;
	// empty: none is set and the worker stamps nothing.
	LaunchID string
}

// Patch is a patch crawl's launch messages and what the bounds left out.
type Patch struct {
	Launches []messages.Launch
	// Dropped counts missing URLs past a bound, and those no crawl could
	// fetch (no host key).
	Dropped int
}

// PatchLaunches turns the report's missing URLs into launch messages for
// tocrawl, as if each page had discovered them as embeds: hop E, via the
// page, the page's hop path, source and heritable keys inherited
// (messages.ChildLaunch, the contract every discovered URI follows). Worst
// pages come first, so a bound keeps what matters most. Each URL is sent
// once. Nothing is forced: the worker applies scope, robots and its
// address guard as to any discovered URI, and its frontier admits a URL it
// has already seen no second time.
func PatchLaunches(r *Report, b PatchBounds, now time.Time) (Patch, error) {
	if b.PerPage <= 0 {
		b.PerPage = 50
	}
	if b.PerLaunch <= 0 {
		b.PerLaunch = 1000
	}
	var p Patch
	sent := map[string]bool{}
	for _, pg := range r.Results {
		parent, err := parentLaunch(pg.Page, b.LaunchID)
		if err != nil {
			return Patch{}, err
		}
		taken := 0
		for _, u := range pg.Missing {
			// The page itself missing (its capture lost) is not an
			// embed of itself: the archive's defect, not the crawl's.
			if sent[u] || u == pg.URL {
				continue
			}
			if _, err := hostkey.ForURL(u); err != nil {
				p.Dropped++ // not a URL a crawl can fetch
				continue
			}
			if taken == b.PerPage || len(p.Launches) == b.PerLaunch {
				p.Dropped++
				continue
			}
			sent[u] = true
			taken++
			p.Launches = append(p.Launches, messages.ChildLaunch(parent, u, string(messages.HopEmbed), now))
		}
	}
	return p, nil
}

// parentLaunch is the launch message the page was crawled from, as far as
// its crawl.log line tells: its URL, hop path and source.
func parentLaunch(pg Page, launchID string) (messages.Launch, error) {
	l := messages.Launch{URL: pg.URL, Method: "GET", ParentURL: pg.Via}
	if n := len(pg.HopPath); n > 0 {
		l.Hop = pg.HopPath[n-1:]
		l.ParentURLMetadata.PathFromSeed = pg.HopPath[:n-1]
	} else {
		l.IsSeed = true
	}
	hd := &l.ParentURLMetadata.HeritableData
	hd.Source, hd.Heritable = pg.Source, []string{"source", "heritable"}
	if launchID != "" {
		raw, err := json.Marshal(launchID)
		if err != nil {
			return l, fmt.Errorf("qa: launch id: %w", err)
		}
		hd.Extra = map[string]json.RawMessage{messages.HeritableLaunchID: raw}
		hd.Heritable = append(hd.Heritable, messages.HeritableLaunchID)
	}
	return l, nil
}

// Publish sends the patch's launches to topic (the crawl's tocrawl),
// keyed by host as the launcher keys them, and counts them.
func Publish(ctx context.Context, cl *kgo.Client, topic string, p Patch, m *Metrics) error {
	recs := make([]*kgo.Record, 0, len(p.Launches))
	for _, l := range p.Launches {
		b, err := messages.AppendLaunch(nil, l)
		if err != nil {
			return fmt.Errorf("qa: encode patch launch %s: %w", l.URL, err)
		}
		key, err := hostkey.ForURL(l.URL)
		if err != nil {
			return fmt.Errorf("qa: patch launch %s: %w", l.URL, err)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(key), Value: b})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("qa: publish patch to %s: %w", topic, err)
	}
	m.patch(len(p.Launches), p.Dropped)
	return nil
}
