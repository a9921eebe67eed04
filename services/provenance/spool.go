package provenance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/metawarc"
)

// A streaming launch's events are spooled to disk as they are consumed,
// one JSON line each, in <data>/provenance/<crawl>/spool/<source id>-<ts>/:
// events.jsonl while the launch runs, renamed to events-<n>.sealed.jsonl
// when its metadata WARC is built (appends stop once it is sealed), and
// seeds.txt (the seeds' URLs, its seeds record). The directory's
// launch.key names the launch, and it is removed once the launch is done.
// A batch is appended and fsynced before it is counted in Redis, so a
// counted event is on disk; a batch redelivered after a crash is spooled
// twice, and the external sort keeps each URL once.
const (
	spoolEvents = "events.jsonl"
	spoolSeeds  = "seeds.txt"
	spoolKey    = "launch.key"
)

// SpoolDir is where streaming launches' events are spooled.
func (c Config) SpoolDir() string { return filepath.Join(c.ReportDir(), "spool") }

// spoolDirOf is one launch's spool directory.
func (c Config) spoolDirOf(l harveststats.Launch) string {
	ts := l.Timestamp
	if ts == "" {
		ts = "none"
	}
	return filepath.Join(c.SpoolDir(), metawarc.SourceID(l.Source)+"-"+ts)
}

// handleStream spools and counts a batch of a streaming crawl: the events
// of launches not yet sealed go to their spool files, then every event is
// counted by its offset (an event of a sealed launch counts in Redis, as
// a late event does, but changes neither its file nor its statistics).
func (s *Service) handleStream(ctx context.Context, batch []kafka.Item[messages.Crawled]) error {
	evs := make([]harveststats.Positioned, len(batch))
	byLaunch := map[harveststats.Launch][]int{}
	var order []harveststats.Launch
	for i, it := range batch {
		evs[i] = harveststats.Positioned{Event: it.Value, Partition: it.Record.Partition, Offset: it.Record.Offset}
		l := harveststats.StreamLaunch(&evs[i].Event)
		if _, ok := byLaunch[l]; !ok {
			order = append(order, l)
		}
		byLaunch[l] = append(byLaunch[l], i)
	}
	s.spoolMu.Lock()
	for _, l := range order {
		if err := s.spool(ctx, l, evs, byLaunch[l]); err != nil {
			s.spoolMu.Unlock()
			s.m.errors.WithLabelValues("spool").Inc()
			return err
		}
	}
	s.spoolMu.Unlock()
	if err := s.store.RecordStream(ctx, evs); err != nil {
		s.m.errors.WithLabelValues("record").Inc()
		return err
	}
	s.m.events.Add(float64(len(evs)))
	return nil
}

// spool appends the events at idx, of launch l, to its spool files and
// syncs them, unless l is sealed. Callers hold spoolMu.
func (s *Service) spool(ctx context.Context, l harveststats.Launch, evs []harveststats.Positioned, idx []int) error {
	sealed, err := s.store.IsSealed(ctx, l)
	if err != nil || sealed {
		return err
	}
	dir := s.cfg.spoolDirOf(l)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("provenance: spool: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, spoolKey)); errors.Is(err, os.ErrNotExist) {
		if err := writeFile(filepath.Join(dir, spoolKey), []byte(l.Key())); err != nil {
			return err
		}
	}
	var events, seeds []byte
	for _, i := range idx {
		ev := &evs[i].Event
		b, err := ev.MarshalJSON()
		if err != nil {
			return fmt.Errorf("provenance: spool: encode event %s: %w", ev.URL, err)
		}
		events = append(append(events, b...), '\n')
		if ev.HopPath == "" && !strings.HasPrefix(ev.URL, "dns:") && !strings.ContainsAny(ev.URL, "\n\r") {
			seeds = append(append(seeds, ev.URL...), '\n')
		}
	}
	if err := appendSync(filepath.Join(dir, spoolEvents), events); err != nil {
		return err
	}
	return appendSync(filepath.Join(dir, spoolSeeds), seeds)
}

// appendSync appends b to path and syncs it.
func appendSync(path string, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("provenance: spool: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("provenance: spool %s: %w", path, err)
	}
	return nil
}

// sealSpool stops appends to a sealed launch's spool (they stopped when
// it was sealed; this takes the file out of the appender's way) and
// returns its event files: events-<n>.sealed.jsonl, every earlier attempt's
// too.
func (s *Service) sealSpool(l harveststats.Launch) ([]string, error) {
	s.spoolMu.Lock()
	defer s.spoolMu.Unlock()
	dir := s.cfg.spoolDirOf(l)
	cur := filepath.Join(dir, spoolEvents)
	if _, err := os.Stat(cur); err == nil {
		old, _ := filepath.Glob(filepath.Join(dir, "events-*.sealed.jsonl"))
		next := filepath.Join(dir, "events-"+strconv.Itoa(len(old))+".sealed.jsonl")
		if err := os.Rename(cur, next); err != nil {
			return nil, fmt.Errorf("provenance: spool: %w", err)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "events-*.sealed.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("provenance: spool: %w", err)
	}
	return files, nil
}

// dropSpools removes the spool directories of launches already done: what
// a crash between marking a launch done and removing its spool left.
func (s *Service) dropSpools(ctx context.Context) error {
	dirs, _ := filepath.Glob(filepath.Join(s.cfg.SpoolDir(), "*", spoolKey))
	for _, k := range dirs {
		b, err := os.ReadFile(k)
		if err != nil {
			return fmt.Errorf("provenance: spool: %w", err)
		}
		l, err := harveststats.ParseKey(string(b))
		if err != nil {
			s.log.Warn("spool directory with a bad launch key left alone", "dir", filepath.Dir(k), "err", err)
			continue
		}
		if f, err := s.store.Done(ctx, l); err != nil {
			return err
		} else if f != "" {
			if err := os.RemoveAll(filepath.Dir(k)); err != nil {
				return fmt.Errorf("provenance: spool: %w", err)
			}
		}
	}
	return nil
}

// firstOrigin reads the stream and WARC prefix that the first event
// naming one names, among the first lines of the spool files.
func firstOrigin(files []string) streamOrigin {
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for n := 0; n < 1000 && sc.Scan(); n++ {
			ev, err := messages.DecodeCrawled(sc.Bytes())
			if err != nil {
				continue
			}
			var o streamOrigin
			o.stream, _ = ev.ExtraInfo["stream"].(string)
			o.prefix, _ = ev.ExtraInfo["warcPrefix"].(string)
			if o.stream != "" || o.prefix != "" {
				_ = f.Close()
				return o
			}
		}
		_ = f.Close()
	}
	return streamOrigin{}
}
