package provenance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.yaml.in/yaml/v3"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/metawarc"
	"github.com/trawler-crawl/trawler/pkg/reports"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// Report file names, beside Heritrix's six reports in a launch's
// directory under Config.ReportDir.
const (
	StatsJSON = "harvest-statistics.json"
	StatsText = "harvest-statistics.txt"
)

// LaunchDir is the report directory of a launch:
// <data>/provenance/<crawl>/<source id>-<launch timestamp or "none">.
func (c Config) LaunchDir(l harveststats.Launch) string {
	ts := l.Timestamp
	if ts == "" {
		ts = "none"
	}
	return filepath.Join(c.ReportDir(), metawarc.SourceID(l.Source)+"-"+ts)
}

// writeLaunch publishes a sealed launch's statistics, writes its reports
// and its metadata WARC, announces the WARC and marks the launch done.
// Every step may be repeated after a crash: the topic is keyed by launch,
// files are replaced whole, and the WARC keeps its first complete copy.
func (s *Service) writeLaunch(ctx context.Context, p *pendingLaunch) error {
	l := p.launch
	st, js, err := s.statsJSON(ctx, l)
	if err != nil {
		return err
	}
	launched, hasTime := launchTime(l)
	at := launched
	if !hasTime {
		at = st.Totals.FirstFetch
	}
	agg, cdxLines, seeds, origin := s.collect(p.events)
	meta, err := s.metaFor(origin)
	if err != nil {
		return err
	}
	name := meta.Name(l.Source, at)
	if res, ok := writtenBefore(meta.Dir, name); ok {
		return s.finish(ctx, l, js, res, st.State)
	}
	if err := s.publishStats(ctx, l, st, js); err != nil {
		return err
	}
	dir := s.cfg.LaunchDir(l)
	now := s.d.Now().UTC()
	info := reports.RunInfo{End: now, Status: runStatus(st.State)}
	if hasTime {
		info.Start = launched
	}
	if err := agg.WriteAll(dir, info); err != nil {
		return fmt.Errorf("provenance: reports of %s: %w", l, err)
	}
	for name, data := range map[string][]byte{StatsJSON: js, StatsText: st.Text()} {
		if err := writeFile(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	items, err := s.items(l, st, js, dir, cdxLines, seeds, p.log)
	if err != nil {
		return err
	}
	res, err := metawarc.Write(ctx, meta, name, now, items)
	if err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	return s.finish(ctx, l, js, res, st.State)
}

// finish announces a launch's metadata WARC and marks the launch done.
func (s *Service) finish(ctx context.Context, l harveststats.Launch, js []byte, res metawarc.Result, state string) error {
	if err := s.announce(ctx, res); err != nil {
		return err
	}
	if err := s.store.MarkDone(ctx, l, res.Name, js); err != nil {
		return err
	}
	s.m.warcs.Inc()
	s.log.Info("metadata WARC written", "source", l.Source, "launch", l.Timestamp, "state", state,
		"file", res.Path, "existed", res.Existed)
	return nil
}

// streamOrigin is the stream and WARC prefix a launch's events name
// (extra_info.stream, extra_info.warcPrefix): its metadata WARC goes with
// that stream's content, under that stream's legal basis.
type streamOrigin struct{ stream, prefix string }

// collect reads the launch's events (every event, in time order) into
// reports, CDX11 lines and seeds, each URL once (its first event), and
// the stream they came from.
func (s *Service) collect(all []messages.Crawled) (*reports.Aggregator, []byte, []string, streamOrigin) {
	var evs []messages.Crawled
	var seeds []string
	var origin streamOrigin
	seen := map[string]bool{}
	for _, ev := range all {
		if seen[ev.URL] {
			continue // a recrawl within the launch, or a retried URI's repeat
		}
		seen[ev.URL] = true
		if origin.stream == "" {
			origin.stream, _ = ev.ExtraInfo["stream"].(string)
			origin.prefix, _ = ev.ExtraInfo["warcPrefix"].(string)
		}
		evs = append(evs, ev)
		if ev.HopPath == "" && !strings.HasPrefix(ev.URL, "dns:") {
			seeds = append(seeds, ev.URL)
		}
	}
	agg := reports.New(reports.Options{CrawlName: s.d.Profile.Crawl.Name, Seeds: seeds})
	var lines []string
	for _, ev := range evs {
		agg.Add(ev)
		if line, ok := cdx.FromCrawled(ev); ok {
			lines = append(lines, line.CDX11())
		}
	}
	// CDX files are sorted, as `sort` would sort them for a CDX server.
	slices.Sort(lines)
	var b strings.Builder
	if len(lines) > 0 {
		b.WriteString(" CDX N b a m s k r M S V g\n")
	}
	for _, line := range lines {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return agg, []byte(b.String()), seeds, origin
}

// metaFor is where a launch of origin's stream writes its metadata WARC:
// the configured directory and prefix, unless they are the defaults and
// the launch belongs to another stream of the crawl (a bypm launch gets
// <data>/warcs/fc-bypm-metadata and BYPM-METADATA, not npld's). A
// directory first used is cleared of what a crash left in its staging.
func (s *Service) metaFor(o streamOrigin) (metawarc.Config, error) {
	m := s.meta
	if o.stream != "" && o.stream != s.cfg.Stream && s.cfg.WARCDir == "" && s.cfg.Crawl == "fc" {
		m.Dir = filepath.Join(s.cfg.DataDir, "warcs", s.cfg.Crawl+"-"+o.stream+"-metadata")
	}
	if o.prefix != "" && s.cfg.WARCPrefix == "" && !strings.ContainsAny(o.prefix, "/\\ ") {
		m.Prefix = strings.TrimSuffix(o.prefix, "-WEBRENDER") + "-METADATA"
	}
	if !s.recovered[m.Dir] {
		if err := metawarc.Recover(m.Dir, s.log); err != nil {
			return m, err
		}
		s.recovered[m.Dir] = true
	}
	return m, nil
}

// items are the metadata WARC's records of an in-memory launch.
func (s *Service) items(l harveststats.Launch, st harveststats.LaunchStats, js []byte,
	dir string, cdxLines []byte, seeds []string, logLines []byte) ([]metawarc.Item, error) {
	return s.itemsOf(l, st, js, dir, staged{seedsBlock: []byte(strings.Join(seeds, "\n") + "\n"), logBlock: logLines, cdxBlock: cdxLines})
}

// staged are a launch's seeds, crawl.log and CDX records: blocks in
// memory, or files on disk (a streaming launch's).
type staged struct {
	seedsBlock, logBlock, cdxBlock []byte
	seeds, log, cdx                string
	// reportFiles: the reports are written into the WARC from their
	// files, not read into memory (a streaming launch's hosts report may
	// have tens of millions of lines).
	reportFiles bool
}

// itemsOf are the metadata WARC's records, in NetarchiveSuite's order:
// setup, logs, reports, index.
func (s *Service) itemsOf(l harveststats.Launch, st harveststats.LaunchStats, js []byte,
	dir string, rec staged) ([]metawarc.Item, error) {
	uri := func(path string) string { return metawarc.URI(path, s.cfg.Crawl, l.Source, l.Timestamp) }
	sheets, err := yaml.Marshal(s.d.Profile.Sheets)
	if err != nil {
		return nil, fmt.Errorf("provenance: encode sheets: %w", err)
	}
	items := []metawarc.Item{
		{URI: uri(metawarc.PathProfile), ContentType: "application/yaml", Block: []byte(s.d.Profile.YAML())},
		{URI: uri(metawarc.PathSheets), ContentType: "application/yaml", Block: sheets},
		{URI: uri(metawarc.PathSeeds), ContentType: "text/plain", Block: rec.seedsBlock, File: rec.seeds},
		{URI: uri(metawarc.PathCrawlLog), ContentType: "text/plain", Block: rec.logBlock, File: rec.log},
	}
	for _, name := range []string{reports.CrawlReport, reports.SeedsReport, reports.HostsReport,
		reports.SourceReport, reports.MimetypeReport, reports.ResponseCodeReport} {
		it := metawarc.Item{URI: uri(metawarc.PathReports + name), ContentType: "text/plain", File: filepath.Join(dir, name)}
		if !rec.reportFiles {
			b, err := os.ReadFile(it.File)
			if err != nil {
				return nil, fmt.Errorf("provenance: read report: %w", err)
			}
			it.Block, it.File = b, ""
		}
		items = append(items, it)
	}
	items = append(items,
		metawarc.Item{URI: uri(metawarc.PathStatsJSON), ContentType: "application/json", Block: js},
		metawarc.Item{URI: uri(metawarc.PathStatsText), ContentType: "text/plain", Block: st.Text()},
		metawarc.Item{URI: uri(metawarc.PathCDX), ContentType: "text/plain", Block: rec.cdxBlock, File: rec.cdx})
	qa, err := qaReportItems(dir, uri)
	if err != nil {
		return nil, err
	}
	return append(items, qa...), nil
}

// pendingLaunch is a sealed launch being written: its events, every one
// in time order, and its lines of crawl.log.
type pendingLaunch struct {
	launch harveststats.Launch
	events []messages.Crawled
	log    []byte
}

// loadPending reads the events of launches and selects their crawl.log
// lines: the line of each event (crawl.log has a line per crawled event,
// with the event's time and URL), so a URI of a launch logged after the
// next launch began is in it and the next launch's are not. The logs are
// read once for all of them.
func (s *Service) loadPending(ctx context.Context, ls []harveststats.Launch) ([]*pendingLaunch, error) {
	var sets metawarc.LineSets
	out := make([]*pendingLaunch, len(ls))
	for i, l := range ls {
		p := &pendingLaunch{launch: l}
		if err := s.store.Events(ctx, l, true, func(ev messages.Crawled) error {
			p.events = append(p.events, ev)
			sets.Add(i, ev)
			return nil
		}); err != nil {
			return nil, err
		}
		out[i] = p
	}
	files, err := metawarc.LogFiles(s.cfg.logDirs())
	if err != nil {
		return nil, fmt.Errorf("provenance: %w", err)
	}
	logs, _, err := sets.Select(files)
	if err != nil {
		return nil, fmt.Errorf("provenance: %w", err)
	}
	for i := range logs {
		out[i].log = logs[i]
	}
	return out, nil
}

// launchTime parses a launch's timestamp; false for none.
func launchTime(l harveststats.Launch) (time.Time, bool) {
	t, err := messages.ParseTimestamp14(l.Timestamp)
	return t, err == nil && l.Timestamp != ""
}

// runStatus is Heritrix's crawl status text for a launch's state.
func runStatus(state string) string {
	switch state {
	case harveststats.StateCompleted:
		return "Finished"
	case harveststats.StateRunning:
		return "Finished - Still running when the crawl ended"
	case harveststats.ReasonTerminated:
		return "Finished - Ended by operator"
	}
	return "Finished - " + state + " limit hit"
}

// announce publishes the closed-file notice of a metadata WARC.
func (s *Service) announce(ctx context.Context, res metawarc.Result) error {
	n := messages.WarcNotice{Filename: res.Name, Path: res.Path, Size: res.Size, Records: res.Records,
		CrawlName: s.d.Profile.Crawl.Name, Host: s.meta.Hostname,
		Opened: messages.FormatTimestamp(res.Opened), Closed: messages.FormatTimestamp(res.Closed)}
	if res.Opened.IsZero() {
		n.Opened = n.Closed
	}
	b, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("provenance: encode notice: %w", err)
	}
	return s.publish(ctx, s.cfg.WARCsTopic(), res.Name, b)
}

// MaxStatsRecordBytes bounds one launch's statistics record: about 360
// bytes a domain, so 16 MiB holds some 45,000 domains. The producer's
// default (1 MB, about 2,900 domains) refused the record of a launch that
// reached 5,000 domains, and the launch never sealed; the harveststats
// topics allow records this large (kafka-topics/topics.yaml,
// max.message.bytes), and the producer sends them.
const MaxStatsRecordBytes = 16 << 20

// producerOpts are the provenance producer's options: records up to
// MaxStatsRecordBytes.
func producerOpts(log *slog.Logger) []kgo.Opt {
	return []kgo.Opt{kafka.WithSlog(log), kgo.ProducerBatchMaxBytes(MaxStatsRecordBytes)}
}

// publishStats publishes a launch's statistics (js, st encoded) on the
// statistics topic. A record past MaxStatsRecordBytes (a domain crawl's
// millions of domains) is published without its domain table, with
// domainsOmitted saying how many rows the metadata WARC and the report
// files hold instead; a smaller one is published as it is.
func (s *Service) publishStats(ctx context.Context, l harveststats.Launch, st harveststats.LaunchStats, js []byte) error {
	if len(js) > MaxStatsRecordBytes-statsRecordSlack {
		st.DomainsOmitted, st.Domains = len(st.Domains), nil
		var err error
		if js, err = json.Marshal(st); err != nil {
			return fmt.Errorf("provenance: encode statistics of %s: %w", l, err)
		}
	}
	return s.publish(ctx, s.cfg.StatsTopic(), l.Key(), js)
}

// statsRecordSlack leaves room under MaxStatsRecordBytes for the record's
// key, headers and batch framing.
const statsRecordSlack = 4 << 10

// publish produces one record and waits for it.
func (s *Service) publish(ctx context.Context, topic, key string, value []byte) error {
	if err := s.out.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(key), Value: value}).FirstErr(); err != nil {
		return fmt.Errorf("provenance: produce to %s: %w", topic, err)
	}
	return nil
}

// writeFile replaces path whole: a temporary file renamed into place.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	return nil
}

// waitCaughtUp waits until the statistics group has committed the end of
// every partition of the crawled topic.
func (s *Service) waitCaughtUp(ctx context.Context) error {
	adm := kadm.NewClient(s.out)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		lag, err := kafka.GroupLag(ctx, adm, s.cfg.Group(), s.cfg.CrawledTopic())
		if err == nil && lag == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("provenance: wait for the statistics consumer (lag %d, %v): %w", lag, err, ctx.Err())
		case <-t.C:
		}
	}
}

// statsJSON reads a launch's statistics and encodes them as the
// statistics record and files carry them.
func (s *Service) statsJSON(ctx context.Context, l harveststats.Launch) (harveststats.LaunchStats, []byte, error) {
	st, err := s.store.Stats(ctx, l)
	if err != nil {
		return st, nil, err
	}
	js, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return st, nil, fmt.Errorf("provenance: encode statistics of %s: %w", l, err)
	}
	return st, js, nil
}

// writtenBefore reports a launch's metadata WARC already in dir: a crash
// came between the rename and the mark (statistics and reports were
// written before the file), or late events brought back a launch whose
// statistics had expired (pkg/harveststats/expire.go), whose own would
// replace the launch's. Either way the file stands.
func writtenBefore(dir, name string) (metawarc.Result, bool) {
	path := filepath.Join(dir, name)
	fi, err := os.Stat(path)
	if err != nil {
		return metawarc.Result{}, false
	}
	return metawarc.Result{ClosedFile: warcwriter.ClosedFile{Name: name, Path: path, Size: fi.Size(), Closed: fi.ModTime()},
		Existed: true}, true
}
