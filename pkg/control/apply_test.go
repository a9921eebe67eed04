package control

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/sheets"
)

type fixture struct {
	app              *Applier
	front            *frontier.Frontier
	seeds, terminate atomic.Int32
	deletes          atomic.Int32
}

func newFixture(t *testing.T, worker string) (*fixture, func(string) *fixture) {
	t.Helper()
	rdb := embeddedtest.Redis(t)
	mk := func(worker string) *fixture {
		f, err := frontier.New(rdb, "fc-npld", frontier.OptionsFrom(profile.Default()))
		if err != nil {
			t.Fatal(err)
		}
		sh, err := sheets.New(context.Background(), profile.Default(), sheets.Options{Redis: rdb, KeyPrefix: f.Prefix()})
		if err != nil {
			t.Fatal(err)
		}
		fx := &fixture{front: f}
		fx.app, err = New(Config{Redis: rdb, Crawl: "fc", Stream: "npld", Worker: worker, Frontier: f, Sheets: sh,
			Seeds: func(context.Context, messages.Control) (string, error) { fx.seeds.Add(1); return "ok", nil },
			Delete: func(context.Context, frontier.Selector, messages.Control) (int, error) {
				fx.deletes.Add(1)
				return 0, nil
			},
			Terminate: func(messages.Control) { fx.terminate.Add(1) },
		})
		if err != nil {
			t.Fatal(err)
		}
		return fx
	}
	return mk(worker), mk
}

// Bad input is refused with the reason, changes nothing and is
// acknowledged with the error; the same id, corrected, still applies.
func TestApplyBadInput(t *testing.T) {
	fx, _ := newFixture(t, "w1")
	ctx := context.Background()
	bad := []struct {
		c       messages.Control
		mention string
	}{
		{messages.Control{ID: "b1", Command: "pause", Scope: "planet"}, "unknown scope"},
		{messages.Control{ID: "b2", Command: "exclusions", SURTs: []string{""}}, "surts[0]"},
		{messages.Control{ID: "b3", Command: "exclusions", SURTs: []string{"http://(com,"}, URLs: []string{"not a url at all"}}, "urls[0]"},
		{messages.Control{ID: "b4", Command: "delete", Regex: "a(b"}, "regex"},
		{messages.Control{ID: "b5", Command: "delete"}, `"regex"`},
		{messages.Control{ID: "b6", Command: "sheets", URLs: []string{"http://example.com/"}}, `"sheets"`},
		{messages.Control{ID: "b7", Command: "exclusions", SURTs: []string{"-http://(com,"}}, "surts[0]"},
		{messages.Control{Command: "pause"}, "empty id"},
		{messages.Control{ID: "b8", Command: "pause", Scope: "host"}, `"host"`},
		{messages.Control{ID: "b9", Command: "terminate", Scope: "target"}, `"source"`},
	}
	for _, tt := range bad {
		_, err := fx.app.Apply(ctx, tt.c)
		if err == nil || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("Apply(%+v) = %v, want an error mentioning %q", tt.c, err, tt.mention)
		}
	}
	if fx.terminate.Load() != 0 || fx.app.excl.Len() != 0 {
		t.Fatal("bad input changed something")
	}
	// b7 passed validation in pkg/messages and was refused here: acked.
	a, err := Ack(ctx, fx.app.cfg.Redis, "fc", "b7")
	if err != nil || a.Error == "" || a.Result != "refused" {
		t.Errorf("ack of a refused command: %+v, %v", a, err)
	}
	good := messages.Control{ID: "b7", Command: "exclusions", SURTs: []string{"http://(com,example,"}, By: "ops"}
	if res, err := fx.app.Apply(ctx, good); err != nil || !res.Applied {
		t.Fatalf("corrected command: %+v, %v", res, err)
	}
	if _, err := Ack(ctx, fx.app.cfg.Redis, "fc", "nope"); !errors.Is(err, ErrNoAck) {
		t.Errorf("Ack of an unknown id: %v", err)
	}
}

// A command replayed (twice on one worker, once more on another) is
// applied once; its acknowledgement names the first worker and sender.
func TestApplyReplayedOnce(t *testing.T) {
	fx, mk := newFixture(t, "w1")
	other := mk("w2")
	ctx := context.Background()
	c := messages.Control{ID: "c1", Command: "seeds", URLs: []string{"http://example.com/"}, By: "alice"}
	for i, app := range []*Applier{fx.app, fx.app, other.app} {
		res, err := app.Apply(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Applied != (i == 0) {
			t.Errorf("application %d: %+v", i, res)
		}
	}
	if n := fx.seeds.Load() + other.seeds.Load(); n != 1 {
		t.Errorf("seeds hook ran %d times", n)
	}
	a, err := Ack(ctx, fx.app.cfg.Redis, "fc", "c1")
	if err != nil || a.Worker != "w1" || a.By != "alice" || a.Command != "seeds" || a.Result != "ok" || a.AppliedAt.IsZero() {
		t.Errorf("ack: %+v, %v", a, err)
	}

	// Exclusions: add twice is one prefix; remove applies once too.
	add := messages.Control{ID: "x1", Command: "exclusions", URLs: []string{"https://www.example.org/private/"}}
	for range 2 {
		if _, err := fx.app.Apply(ctx, add); err != nil {
			t.Fatal(err)
		}
	}
	x := scope.NewExclusions(fx.app.cfg.Redis, fx.front.Prefix())
	if err := x.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if m := x.Members(); len(m) != 1 || m[0] != "http://(org,example,www,)/private/" {
		t.Errorf("exclusions %v", m)
	}
	rm := messages.Control{ID: "x2", Command: "exclusions", Action: "remove", URLs: []string{"http://www.example.org/private/"}}
	if _, err := other.app.Apply(ctx, rm); err != nil {
		t.Fatal(err)
	}
	if err := x.Refresh(ctx); err != nil || x.Len() != 0 {
		t.Errorf("after remove: %v, %v", x.Members(), err)
	}

	// Target pause is a set in Redis, read by every worker.
	p := messages.Control{ID: "p1", Command: "pause", Scope: "target", Source: "tid:7"}
	if _, err := other.app.Apply(ctx, p); err != nil {
		t.Fatal(err)
	}
	got, err := NewPausedSources(fx.app.cfg.Redis, fx.front.Prefix(), 0).Get(ctx)
	if _, ok := got["tid:7"]; !ok || err != nil {
		t.Errorf("paused sources %v, %v", got, err)
	}

	// Crawl pause is the frontier's flag.
	if _, err := fx.app.Apply(ctx, messages.Control{ID: "p2", Command: "pause"}); err != nil {
		t.Fatal(err)
	}
	if st, err := fx.front.Stats(ctx); err != nil || !st.Paused {
		t.Errorf("crawl pause: %+v, %v", st, err)
	}

	// Terminate acts on every worker; another worker's or stream's
	// commands are skipped.
	for _, app := range []*Applier{fx.app, other.app} {
		if _, err := app.Apply(ctx, messages.Control{ID: "t1", Command: "terminate"}); err != nil {
			t.Fatal(err)
		}
	}
	if fx.terminate.Load() != 1 || other.terminate.Load() != 1 {
		t.Errorf("terminate: %d, %d", fx.terminate.Load(), other.terminate.Load())
	}
	for _, c := range []messages.Control{{ID: "s1", Command: "terminate", Target: "w9"}, {ID: "s2", Command: "terminate", Stream: "bypm", Scope: "stream"}} {
		if res, err := fx.app.Apply(ctx, c); err != nil || res.Applied {
			t.Errorf("%+v: %+v, %v", c, res, err)
		}
	}
	if fx.terminate.Load() != 1 {
		t.Error("a terminate for another worker or stream was acted on")
	}
}

// Selector matches URIs under a prefix and, when given, the regex.
func TestSelector(t *testing.T) {
	sel, err := Selector(messages.Control{Command: "delete", URLs: []string{"http://example.com/a/"}, Regex: `\.pdf$`})
	if err != nil {
		t.Fatal(err)
	}
	for u, want := range map[string]bool{
		"http://example.com/a/x.pdf":  true,
		"https://example.com/a/y.pdf": true,
		"http://example.com/a/x.html": false,
		"http://example.com/b/x.pdf":  false,
		"http://other.com/a/x.pdf":    false,
	} {
		if got := sel.URL(u); got != want {
			t.Errorf("URL(%s) = %v", u, got)
		}
	}
	if !sel.Host("example.com") || sel.Host("other.com") {
		t.Error("Host filter")
	}
	if _, err := Selector(messages.Control{Command: "delete", SURTs: []string{"(com,"}, Regex: "["}); err == nil {
		t.Error("bad regex accepted")
	}
}

// A terminate is recorded for workers started after it, and a resume of
// the crawl lifts it.
func TestTerminateRecordedUntilResume(t *testing.T) {
	fx, _ := newFixture(t, "w1")
	ctx := context.Background()
	rdb := fx.app.cfg.Redis
	if _, ok, err := Terminated(ctx, rdb, fx.front.Prefix()); err != nil || ok {
		t.Fatalf("terminated before any command: %v, %v", ok, err)
	}
	if _, err := fx.app.Apply(ctx, messages.Control{ID: "t-rec", Command: "terminate"}); err != nil {
		t.Fatal(err)
	}
	if id, ok, err := Terminated(ctx, rdb, fx.front.Prefix()); err != nil || !ok || id != "t-rec" {
		t.Fatalf("after terminate: %q %v %v, want t-rec", id, ok, err)
	}
	if _, err := fx.app.Apply(ctx, messages.Control{ID: "r-rec", Command: "resume"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := Terminated(ctx, rdb, fx.front.Prefix()); err != nil || ok {
		t.Fatalf("after resume: still terminated (%v)", err)
	}
}

// With the worker's own exclusion list in Config, an exclusion is in
// force in it when the command is acknowledged, without waiting for the
// list's next refresh (the console test saw a fetch under a prefix
// after its acknowledgement).
func TestApplyExclusionsIntoWorkersList(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	f, err := frontier.New(rdb, "fc-npld", frontier.OptionsFrom(profile.Default()))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := sheets.New(ctx, profile.Default(), sheets.Options{Redis: rdb, KeyPrefix: f.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	mine := scope.NewExclusions(rdb, f.Prefix())
	app, err := New(Config{Redis: rdb, Crawl: "fc", Stream: "npld", Worker: "w1", Frontier: f, Sheets: sh, Exclusions: mine,
		Seeds:     func(context.Context, messages.Control) (string, error) { return "", nil },
		Delete:    func(context.Context, frontier.Selector, messages.Control) (int, error) { return 0, nil },
		Terminate: func(messages.Control) {}})
	if err != nil {
		t.Fatal(err)
	}
	const surt = "http://(org,example,www,)/private/page"
	if _, err := app.Apply(ctx, messages.Control{ID: "x1", Command: "exclusions", URLs: []string{"https://www.example.org/private/"}}); err != nil {
		t.Fatal(err)
	}
	if a, err := Ack(ctx, rdb, "fc", "x1"); err != nil || a.AppliedAt.IsZero() {
		t.Fatalf("no ack: %+v, %v", a, err)
	}
	if !mine.Contains(surt) {
		t.Fatalf("acknowledged exclusion not in the worker's list: %v", mine.Members())
	}
}
