package testlog

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestBufferKeepsConcurrentLines(t *testing.T) {
	log, buf := New(slog.LevelInfo)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { log.Info("line", "n", i) })
	}
	log.Debug("below the level")
	wg.Wait()
	if got := strings.Count(buf.String(), "msg=line"); got != 8 {
		t.Fatalf("%d lines logged, want 8:\n%s", got, buf)
	}
	if strings.Contains(buf.String(), "below the level") {
		t.Fatal("a debug line passed an info logger")
	}
}
