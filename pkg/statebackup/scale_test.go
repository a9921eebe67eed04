package statebackup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// TestBackupScale measures a backup and a restore of a frontier of
// STATEBACKUP_SCALE_URIS queued URIs (skipped when unset), for
// docs/state.md's figures:
//
//	STATEBACKUP_SCALE_URIS=1000000 go test -run TestBackupScale -v ./pkg/statebackup/
//
// It restores the backup both ways: into a data directory (Restore) and
// into a running server (RestoreTo).
func TestBackupScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("STATEBACKUP_SCALE_URIS"))
	if n <= 0 {
		t.Skip("set STATEBACKUP_SCALE_URIS")
	}
	ctx := context.Background()
	e := newCrawlEnv(t, 0, 0)
	pol := frontier.PolicyOf(profile.Default())
	start := time.Now()
	for done := 0; done < n; {
		var cs []frontier.Candidate
		for i := 0; i < 5000 && done < n; i, done = i+1, done+1 {
			host := fmt.Sprintf("host%d.example.org", done%5000)
			cs = append(cs, frontier.Candidate{Policy: pol, Launch: messages.Launch{
				URL: fmt.Sprintf("http://%s/section/page-%d.html", host, done), ParentURL: "http://" + host + "/section/index.html",
				ParentURLMetadata: messages.ParentMetadata{PathFromSeed: "LL", HeritableData: messages.HeritableData{Source: "tid:1:http://" + host + "/"}}}})
		}
		if _, err := e.f.Admit(ctx, cs); err != nil {
			t.Fatal(err)
		}
	}
	mem, _ := e.rdb.Info(ctx, "memory").Result()
	t.Logf("admitted %d URIs in %s; used_memory %s", n, time.Since(start).Round(time.Millisecond), infoFields(mem)["used_memory_human"])
	out := filepath.Join(t.TempDir(), "b")
	m, err := Backup(ctx, e.options(out))
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, f := range m.Files {
		size += f.Size
	}
	t.Logf("backup: %d bytes (rdb %d) in %.2fs, claims paused %.3fs", size, m.Files[len(m.Files)-1].Size, m.TookSeconds, m.Quiesce.PausedSecs)
	rep, err := Restore(ctx, RestoreOptions{From: out, DataDir: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restore: %d keys in %s", rep.Keys, rep.Took.Round(time.Millisecond))
	target := embeddedtest.Redis(t)
	rep, err = RestoreTo(ctx, RestoreToOptions{From: out, Redis: target})
	if err != nil {
		t.Fatal(err)
	}
	mem, _ = target.Info(ctx, "memory").Result()
	t.Logf("restore into a running server: %d keys in %s (%.0f keys/s); used_memory %s", rep.Keys,
		rep.Took.Round(time.Millisecond), float64(rep.Keys)/rep.Took.Seconds(), infoFields(mem)["used_memory_human"])
}
