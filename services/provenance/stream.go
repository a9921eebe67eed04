package provenance

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/extsort"
	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/metawarc"
	"github.com/trawler-crawl/trawler/pkg/reports"
)

// A streaming launch's metadata WARC is built from its spool and the
// crawl logs with memory bounded by the sort's run size and the reports'
// tables (reports.Options.MaxKeys), never by the launch's URIs:
//
//   - the spool is sorted by URL then event time (extsort, unique by URL):
//     each URL once, its first event, as the in-memory path takes it;
//   - each of those feeds the reports and gives a CDX line to a second
//     sort, whose merge is the CDX record, staged on disk;
//   - seeds.txt sorted unique is the seeds record, and its first MaxKeys
//     seeds are the reports' seed list;
//   - crawl.log is the lines the logs hold in the launch's time range
//     (metawarc.CopyRange), staged on disk;
//   - staged records go into the WARC from their files
//     (warcwriter.WriteResourceFrom).

// streamBuild is what building one streaming launch found.
type streamBuild struct {
	agg            *reports.Aggregator
	cdx, log, seed string // staged record files
	hosts, sources string // the hosts and source reports
	hostsVisited   int
	events, bad    int64 // spooled lines read, and those that did not decode
	firstBad       string
	logBad         metawarc.RangeResult
}

// buildStream builds a sealed streaming launch's reports aggregate and
// staged records in work (emptied first) from its spool files.
func (s *Service) buildStream(ctx context.Context, l harveststats.Launch, files []string, work string) (*streamBuild, error) {
	if err := os.RemoveAll(work); err != nil {
		return nil, fmt.Errorf("provenance: build %s: %w", l, err)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, fmt.Errorf("provenance: build %s: %w", l, err)
	}
	b := &streamBuild{cdx: filepath.Join(work, "cdx"), log: filepath.Join(work, "crawl.log"), seed: filepath.Join(work, "seeds.txt"),
		hosts: filepath.Join(work, "hosts-report.txt"), sources: filepath.Join(work, "source-report.txt")}
	so, err := s.newSorts(work)
	if err != nil {
		return nil, err
	}
	defer so.close()
	seeds, err := s.sortSeeds(filepath.Join(s.cfg.spoolDirOf(l), spoolSeeds), b.seed, filepath.Join(work, "seeds-runs"), so.byHost)
	if err != nil {
		return nil, err
	}
	b.agg = reports.New(reports.Options{CrawlName: s.d.Profile.Crawl.Name, Seeds: seeds, ExternalHosts: true})
	for _, p := range files {
		if err := s.spoolLines(ctx, p, b, so.byURL); err != nil {
			return nil, err
		}
	}
	if err := so.byURL.Merge(func(line []byte) error { return so.feed(b.agg, line) }); err != nil {
		return nil, fmt.Errorf("provenance: build %s: %w", l, err)
	}
	if b.hostsVisited, err = s.writeHostsReport(so.byHost, b.hosts, filepath.Join(work, "hosts-order-runs")); err != nil {
		return nil, fmt.Errorf("provenance: hosts report of %s: %w", l, err)
	}
	if err := s.writeSourceReport(so.bySource, b.sources, filepath.Join(work, "source-order-runs")); err != nil {
		return nil, fmt.Errorf("provenance: source report of %s: %w", l, err)
	}
	if err := writeSorted(b.cdx, " CDX N b a m s k r M S V g\n", so.byLine); err != nil {
		return nil, fmt.Errorf("provenance: CDX of %s: %w", l, err)
	}
	return b, s.stageLog(ctx, l, b)
}

// sorts are a build's external sorts: the spool by URL (unique), then
// what each URL's event gives: CDX lines, host rows, source × host pairs.
type sorts struct{ byURL, byLine, byHost, bySource *extsort.Sorter }

// newSorts makes a build's sorts. The three fed while the sort by URL
// merges fill at the same time, so they share one run size: the build
// holds about twice --sort-run-bytes of lines at most, whatever the
// launch's size.
func (s *Service) newSorts(work string) (*sorts, error) {
	so := &sorts{}
	run := s.cfg.SortRunBytes
	if run <= 0 {
		run = extsort.DefaultRunBytes
	}
	for _, x := range []struct {
		dst    **extsort.Sorter
		dir    string
		unique bool
		run    int
	}{{&so.byURL, "url-runs", true, run}, {&so.byLine, "cdx-runs", false, max(run/3, 1)},
		{&so.byHost, "host-runs", false, max(run/3, 1)}, {&so.bySource, "source-runs", false, max(run/3, 1)}} {
		sorter, err := extsort.New(extsort.Options{Dir: filepath.Join(work, x.dir), RunBytes: x.run, Unique: x.unique, KeySep: 0})
		if err != nil {
			so.close()
			return nil, err
		}
		*x.dst = sorter
	}
	return so, nil
}

func (so *sorts) close() {
	for _, x := range []*extsort.Sorter{so.byURL, so.byLine, so.byHost, so.bySource} {
		if x != nil {
			_ = x.Close()
		}
	}
}

// feed passes one URL's first event (a line of the sort by URL) to the
// reports and to the sorts of its CDX line, host row and source pair.
func (so *sorts) feed(agg *reports.Aggregator, line []byte) error {
	_, _, js := cutSortLine(line)
	ev, err := messages.DecodeCrawled(js)
	if err != nil {
		return fmt.Errorf("provenance: sorted spool line: %w", err) // it decoded when spooled
	}
	agg.Add(ev)
	if host, row, ok := reports.HostRowOf(&ev); ok {
		if err := so.byHost.Add(hostLine(host, row)); err != nil {
			return err
		}
	}
	if src, host, ok := reports.SourceHostOf(&ev); ok {
		if err := so.bySource.Add(append(append([]byte(src), 0), host...)); err != nil {
			return err
		}
	}
	if c, ok := cdx.FromCrawled(ev); ok {
		return so.byLine.Add([]byte(c.CDX11()))
	}
	return nil
}

// spoolLines adds a spool file's events to the sort by URL, keyed
// "<url>\x00<event time ms, 13 digits>\x00<event JSON>". A line that does
// not decode (a crash cut it short) is counted and skipped.
func (s *Service) spoolLines(ctx context.Context, path string, b *streamBuild, sorter *extsort.Sorter) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("provenance: spool: %w", err)
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReaderSize(f, 64<<10)
	var key []byte
	for n := int64(1); ; n++ {
		line, err := r.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("provenance: spool %s line %d: %w", path, n, err)
		}
		if len(line) == 0 {
			return nil // the end; an unterminated last line is read, and is bad unless whole
		}
		if n%10000 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		b.events++
		line = bytes.TrimSuffix(line, []byte("\n"))
		ev, derr := messages.DecodeCrawled(line)
		if derr != nil || bytes.IndexByte([]byte(ev.URL), 0) >= 0 {
			b.bad++
			if b.firstBad == "" {
				b.firstBad = fmt.Sprintf("%s:%d: %v", path, n, cmpErr(derr, "URL holds a NUL"))
			}
			continue
		}
		ms := int64(9999999999999) // no usable time: after every timed event
		if t, err := ev.Time(); err == nil {
			ms = min(max(t.UnixMilli(), 0), ms)
		}
		key = append(key[:0], ev.URL...)
		key = append(key, 0)
		key = append(key, fmt.Sprintf("%013d", ms)...)
		key = append(key, 0)
		key = append(key, line...)
		if err := sorter.Add(key); err != nil {
			return err
		}
	}
}

func cmpErr(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}

// cutSortLine splits a sort-by-URL line into its URL, time and JSON.
func cutSortLine(line []byte) (url, ms, js []byte) {
	url, rest, _ := bytes.Cut(line, []byte{0})
	ms, js, _ = bytes.Cut(rest, []byte{0})
	return url, ms, js
}

// sortSeeds sorts the seeds spool unique into out (the seeds record) and
// returns the first reports.DefaultMaxKeys seeds, the reports' seed list;
// every seed's host goes to hosts (the hosts report lists it).
func (s *Service) sortSeeds(in, out, runs string, hosts *extsort.Sorter) ([]string, error) {
	sorter, err := extsort.New(extsort.Options{Dir: runs, RunBytes: s.cfg.SortRunBytes, Unique: true, KeySep: '\n'})
	if err != nil {
		return nil, err
	}
	defer sorter.Close()
	if f, err := os.Open(in); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if err := sorter.Add(sc.Bytes()); err != nil {
				_ = f.Close()
				return nil, err
			}
		}
		_ = f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("provenance: seeds spool: %w", err)
		}
	}
	var seeds []string
	var hostErr error
	err = writeSortedFn(out, "", sorter, func(line []byte) {
		if len(seeds) < reports.DefaultMaxKeys {
			seeds = append(seeds, string(line))
		}
		if h, ok := reports.SeedHost(string(line)); ok && hostErr == nil {
			hostErr = hosts.Add(hostLine(h, reports.HostRow{}))
		}
	})
	if err == nil {
		err = hostErr
	}
	return seeds, err
}

// hostLine is a host's row for the sort by host: "<host>\x00<row>".
func hostLine(host string, r reports.HostRow) []byte {
	return append(append([]byte(host), 0), r.Encode()...)
}

// writeHostsReport adds up the sorted rows of each host, orders the hosts
// as the hosts report does (a second sort) and writes the report to
// path. It returns the hosts crawl-report.txt counts (all but "dns:").
func (s *Service) writeHostsReport(byHost *extsort.Sorter, path, runs string) (int, error) {
	ordered, err := extsort.New(extsort.Options{Dir: runs, RunBytes: s.cfg.SortRunBytes})
	if err != nil {
		return 0, err
	}
	defer ordered.Close()
	var cur string
	var row reports.HostRow
	n, have := 0, false
	flush := func() error {
		if !have {
			return nil
		}
		if cur != "dns:" {
			n++
		}
		return ordered.Add(append(append(reports.HostsOrderKey(cur, row), 0), row.Encode()...))
	}
	if err := byHost.Merge(func(line []byte) error {
		host, enc, _ := bytes.Cut(line, []byte{0})
		r, err := reports.DecodeHostRow(enc)
		if err != nil {
			return err
		}
		if !have || string(host) != cur {
			if err := flush(); err != nil {
				return err
			}
			cur, row, have = string(host), reports.HostRow{}, true
		}
		row.Add(r)
		return nil
	}); err != nil {
		return 0, err
	}
	if err := flush(); err != nil {
		return 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	_, err = w.WriteString(reports.HostsReportHeader)
	var line []byte
	if err == nil {
		err = ordered.Merge(func(l []byte) error {
			// "<order>\x00<host>\x00<row>"
			_, rest, _ := bytes.Cut(l, []byte{0})
			host, enc, _ := bytes.Cut(rest, []byte{0})
			r, err := reports.DecodeHostRow(enc)
			if err != nil {
				return err
			}
			line = reports.AppendHostLine(line[:0], string(host), r, 0)
			_, err = w.Write(line)
			return err
		})
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// writeSorted writes header then the sorter's lines to path.
func writeSorted(path, header string, sorter *extsort.Sorter) error {
	return writeSortedFn(path, header, sorter, nil)
}

// writeSortedFn is writeSorted, calling each (when set) with every line.
// The header is written only when there is a line.
func writeSortedFn(path, header string, sorter *extsort.Sorter, each func([]byte)) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	first := true
	err = sorter.Merge(func(line []byte) error {
		if first && header != "" {
			if _, err := w.WriteString(header); err != nil {
				return err
			}
		}
		first = false
		if each != nil {
			each(line)
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		return w.WriteByte('\n')
	})
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("provenance: write %s: %w", path, err)
	}
	return nil
}

// stageLog copies the launch's crawl.log lines, those logged from its
// launch time until the next launch's (one launch at a time), to b.log.
func (s *Service) stageLog(ctx context.Context, l harveststats.Launch, b *streamBuild) error {
	var from, to time.Time
	if t, ok := launchTime(l); ok {
		from = t
	}
	next, err := s.store.NextLaunch(ctx, l)
	if err != nil {
		return err
	}
	if t, err := messages.ParseTimestamp14(next); err == nil && next != "" {
		to = t
	}
	files, err := metawarc.LogFiles(s.cfg.logDirs())
	if err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	f, err := os.Create(b.log)
	if err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	b.logBad, err = metawarc.CopyRange(files, from, to, w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("provenance: crawl.log of %s: %w", l, err)
	}
	return nil
}

// writeStreamLaunch is writeLaunch for a streaming launch: its statistics
// from Redis, everything else from its spool and the logs.
func (s *Service) writeStreamLaunch(ctx context.Context, l harveststats.Launch) error {
	st, js, err := s.statsJSON(ctx, l)
	if err != nil {
		return err
	}
	launched, hasTime := launchTime(l)
	at := launched
	if !hasTime {
		at = st.Totals.FirstFetch
	}
	files, err := s.sealSpool(l)
	if err != nil {
		return err
	}
	meta, err := s.metaFor(firstOrigin(files))
	if err != nil {
		return err
	}
	name := meta.Name(l.Source, at)
	if res, ok := writtenBefore(meta.Dir, name); ok {
		return s.finishStream(ctx, l, js, res, st.State)
	}
	if err := s.publishStats(ctx, l, st, js); err != nil {
		return err
	}
	b, err := s.buildStream(ctx, l, files, filepath.Join(s.cfg.spoolDirOf(l), "build"))
	if err != nil {
		return err
	}
	s.logBuild(l, b)
	dir := s.cfg.LaunchDir(l)
	now := s.d.Now().UTC()
	info := reports.RunInfo{End: now, Status: runStatus(st.State), HostsFile: b.hosts, SourcesFile: b.sources, HostsVisited: b.hostsVisited}
	if hasTime {
		info.Start = launched
	}
	if err := b.agg.WriteAll(dir, info); err != nil {
		return fmt.Errorf("provenance: reports of %s: %w", l, err)
	}
	for name, data := range map[string][]byte{StatsJSON: js, StatsText: st.Text()} {
		if err := writeFile(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	items, err := s.itemsOf(l, st, js, dir, staged{seeds: b.seed, log: b.log, cdx: b.cdx, reportFiles: true})
	if err != nil {
		return err
	}
	res, err := metawarc.Write(ctx, meta, name, now, items)
	if err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	return s.finishStream(ctx, l, js, res, st.State)
}

// logBuild reports what the build skipped.
func (s *Service) logBuild(l harveststats.Launch, b *streamBuild) {
	s.m.spoolBad.Add(float64(b.bad))
	if b.bad > 0 {
		s.log.Warn("spooled events that did not decode skipped", "launch", l.Key(), "bad", b.bad, "first", b.firstBad)
	}
	if b.logBad.Bad > 0 {
		s.log.Warn("crawl.log lines without a time skipped", "launch", l.Key(), "bad", b.logBad.Bad, "first", b.logBad.FirstBad)
	}
	s.log.Info("streaming launch built", "launch", l.Key(), "spooled", b.events, "logLines", b.logBad.Lines,
		"dropped", strconv.FormatInt(b.agg.Dropped(), 10))
}

// finishStream is finish, then the launch's spool goes.
func (s *Service) finishStream(ctx context.Context, l harveststats.Launch, js []byte, res metawarc.Result, state string) error {
	if err := s.finish(ctx, l, js, res, state); err != nil {
		return err
	}
	if err := os.RemoveAll(s.cfg.spoolDirOf(l)); err != nil {
		return fmt.Errorf("provenance: spool: %w", err)
	}
	return nil
}
