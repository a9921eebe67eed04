package renderer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/browser"
	"github.com/trawler-crawl/trawler/pkg/identity"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/spool"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// The janitor recovers the open WARCs of renderers that died and whose
// identity nobody took again (a scaled-down Deployment, a replaced pod
// that got another slot). Every renderer with a leased identity runs one:
// each period it lists the identities named by ".open" files in the
// renderers' WARC and viral directories, and for each that is not its own
// and whose lease is gone it takes that lease as a janitor
// (identity.Sweep), closes the files as their owner's next start would
// (warcwriter.RecoverOpenHost), publishes their notices on <crawl>.warcs in
// the owner's name, and releases the lease. A live renderer's files are
// never touched: its lease is held.

// janitorLoop sweeps at once and then every JanitorPeriod until ctx ends.
func (r *Renderer) janitorLoop(ctx context.Context) {
	identity.RunJanitor(ctx, identityOptions(r.cfg, r.log), r.cfg.JanitorPeriod, "dead renderers", r.sweep)
}

// sweep recovers the open files of every dead renderer it sees, and
// returns how many files it closed.
func (r *Renderer) sweep(ctx context.Context) (int, error) {
	return identity.Sweep(ctx, r.rdb, identityOptions(r.cfg, r.log), []string{r.cfg.WARCDir(), r.cfg.ViralDir()},
		r.cfg.ID, r.recoverDead)
}

// recoverDead closes and announces dead renderer id's open files; the
// janitor holds id's lease.
func (r *Renderer) recoverDead(_ context.Context, id string) (int, error) {
	var recovered []warcwriter.ClosedFile
	var errs []error
	for _, dir := range []string{r.cfg.WARCDir(), r.cfg.ViralDir()} {
		// Partial results are still announced: a file that failed stays
		// .open for the next sweep.
		fs, err := warcwriter.RecoverOpenHost(dir, id, r.log)
		if err != nil {
			errs = append(errs, err)
		}
		recovered = append(recovered, fs...)
	}
	for _, f := range recovered {
		r.log.Warn("janitor: closed WARC left open by a dead renderer", "identity", id, "file", f.Name, "records", f.Records)
		r.announceFor(f, id)
	}
	// Its spool directory goes too: spilled responses, record buffers and
	// browser profiles (with any browser still running on one).
	dir := r.cfg.spoolDirOf(id)
	spool.RemoveStaleLogged(dir, r.log, warcwriter.BufferFilePrefix)
	browser.ReapStale(dir, r.log)
	_ = os.Remove(dir) // only when empty
	return len(recovered), errors.Join(errs...)
}

// announceFor publishes the notice of f, written by renderer host, on
// <crawl>.warcs. It is announce (outputs.go) with the owner's identity in
// place of this renderer's, so the notice names who wrote the file.
func (r *Renderer) announceFor(f warcwriter.ClosedFile, host string) {
	n := messages.WarcNotice{
		Filename: f.Name, Path: f.Path, Size: f.Size, Records: f.Records, CrawlName: r.prof.Crawl.Name,
		Host: host, Opened: messages.FormatTimestamp(f.Opened), Closed: messages.FormatTimestamp(f.Closed),
	}
	b, err := json.Marshal(n)
	if err != nil {
		r.log.Error("encode warc notice", "file", f.Name, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.producer.ProduceSync(ctx, &kgo.Record{Topic: r.cfg.Crawl + ".warcs", Key: []byte(f.Name), Value: b}).FirstErr(); err != nil {
		r.log.Error("publish warc notice", "file", f.Name, "err", fmt.Errorf("janitor for %s: %w", host, err))
	}
}
