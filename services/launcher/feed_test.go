package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// readAll reads a feed with fr and returns the targets it yields.
func readAll(t *testing.T, fr FeedReader, r io.Reader, source string) ([]Target, FeedStats) {
	t.Helper()
	var got []Target
	st, err := fr.ReadFeed(context.Background(), r, source, func(tg Target) error {
		got = append(got, tg)
		return nil
	})
	if err != nil {
		t.Fatalf("ReadFeed(%s): %v", source, err)
	}
	return got, st
}

func readTestFeed(t *testing.T, name string) ([]Target, FeedStats) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return readAll(t, FeedReader{}, f, name)
}

func targetByID(t *testing.T, targets []Target, id int64) Target {
	t.Helper()
	for _, tg := range targets {
		if tg.ID == id {
			return tg
		}
	}
	t.Fatalf("target %d not read", id)
	return Target{}
}

func TestReadFeedGolden(t *testing.T) {
	targets, st := readTestFeed(t, "crawl-feed-npld.jsonl")
	if st.BadLines != 0 || st.DroppedSeeds != 0 || len(targets) != 10 || st.Lines != 10 || st.Targets != 10 {
		t.Fatalf("stats %+v, %d targets; want 10 good lines", st, len(targets))
	}
	for i, tg := range targets {
		if tg.ID != int64(1001+i) || tg.Line != i+1 || tg.Source != "crawl-feed-npld.jsonl" {
			t.Errorf("target %d: id %d at %s:%d", i, tg.ID, tg.Source, tg.Line)
		}
	}
	council := targetByID(t, targets, 1002)
	wantSeeds := []string{"https://www.council.example.gov.uk/", "https://news.council.example.gov.uk/latest"}
	if !slices.Equal(council.Seeds, wantSeeds) || council.Depth != DepthCappedLarge || council.Scope != ScopeSubdomains ||
		!council.IgnoreRobotsTxt || !council.Watched || council.DocumentURLScheme != "https://www.council.example.gov.uk/documents/" {
		t.Errorf("target 1002 = %+v", council)
	}
	if len(council.Schedules) != 1 || council.Schedules[0].Frequency != Weekly ||
		council.Schedules[0].StartDate.String() != "2024-01-03 14:00:00" || !council.Schedules[0].EndDate.IsZero() {
		t.Errorf("target 1002 schedules = %+v", council.Schedules)
	}
	blog := targetByID(t, targets, 1003)
	if got := blog.Schedules[0].EndDate.In(time.UTC); !got.Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("target 1003 end = %v", got)
	}
	if blog.DocumentURLScheme != "" || blog.Scope != ScopePlus1 || blog.Depth != DepthDeep {
		t.Errorf("target 1003 = %+v", blog)
	}
	legacy := targetByID(t, targets, 1010)
	start := legacy.Schedules[0].StartDate
	if want := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC); !start.In(time.UTC).Equal(want) || !start.In(time.FixedZone("x", 3600)).Equal(want) {
		t.Errorf("legacy start = %v, want the instant %v whatever the zone", start.In(time.UTC), want)
	}
	if !legacy.Schedules[0].EndDate.IsZero() || legacy.SecretID.Reveal() != "7" || legacy.SecretID.String() != redacted {
		t.Errorf("legacy target = %+v (secret %q)", legacy, legacy.SecretID.Reveal())
	}
}

func TestReadFeedBadGolden(t *testing.T) {
	targets, st := readTestFeed(t, "crawl-feed-bad.jsonl")
	var ids []int64
	for _, tg := range targets {
		ids = append(ids, tg.ID)
	}
	if !slices.Equal(ids, []int64{2001, 2007, 2008}) {
		t.Fatalf("targets %v, want 2001 2007 2008", ids)
	}
	if seeds := targets[1].Seeds; !slices.Equal(seeds, []string{"https://good.example.org/"}) {
		t.Errorf("target 2007 seeds %v", seeds)
	}
	wantErrs := []struct {
		line    int
		reasons []string
	}{
		{2, []string{"invalid JSON", "unexpected end of JSON input"}},
		{3, []string{`invalid JSON: not an object (starts with 'n')`}},
		{5, []string{"id: want a number, got string", "seeds: want a list of URLs, got string"}},
		{6, []string{`schedules[0].frequency: unknown frequency "FORTNIGHTLY"`}},
		{7, []string{`schedules[0].startDate: want "YYYY-MM-DD HH:MM:SS", got "01/02/2024"`}},
	}
	if st.BadLines != len(wantErrs) || len(st.Errors) != len(wantErrs) {
		t.Fatalf("bad lines %d, errors %v; want %d", st.BadLines, st.Errors, len(wantErrs))
	}
	for i, w := range wantErrs {
		e := st.Errors[i]
		if e.Line != w.line || e.Source != "crawl-feed-bad.jsonl" {
			t.Errorf("error %d at %s:%d, want line %d", i, e.Source, e.Line, w.line)
		}
		prefix := fmt.Sprintf("crawl-feed-bad.jsonl:%d: ", w.line)
		if !strings.HasPrefix(e.Error(), prefix) {
			t.Errorf("error %q does not start with %q", e.Error(), prefix)
		}
		for _, r := range w.reasons {
			if !strings.Contains(e.Reason, r) {
				t.Errorf("line %d reason %q lacks %q", w.line, e.Reason, r)
			}
		}
	}
	if st.DroppedSeeds != 2 || len(st.Warnings) != 2 || st.Warnings[0].Line != 8 ||
		!strings.Contains(st.Warnings[0].Reason, `seed 1 dropped: "ht!tp:// bad url" is not a valid URL`) ||
		!strings.Contains(st.Warnings[1].Reason, `seed 2 dropped: "javascript:alert(1)" is not an http(s) URL`) {
		t.Errorf("warnings %d %v", st.DroppedSeeds, st.Warnings)
	}
	if st.Lines != 9 || st.Targets != 3 {
		t.Errorf("lines %d targets %d, want 9 and 3", st.Lines, st.Targets)
	}
}

const goodLine = `{"id": 1, "seeds": ["https://a.example/"], "schedules": [{"startDate": "2024-01-01 00:00:00", "endDate": "", "frequency": "DAILY"}]}`

// TestParseTargetBadLines drives every validation with one line each.
func TestParseTargetBadLines(t *testing.T) {
	tests := []struct {
		name, line, reason string
	}{
		{"array", `[1, 2]`, "want a JSON object, got list"},
		{"string", `"x"`, "want a JSON object, got string"},
		{"broken array", `[1,`, "invalid JSON: not an object (starts with '[')"},
		{"broken object", `{"id": 1,,}`, "invalid JSON: invalid character ',' looking for beginning of object key string (at byte 10)"},
		{"trailing garbage", goodLine + ` x`, "invalid JSON: invalid character 'x' after top-level value"},
		{"id missing", `{"seeds": ["https://a.example/"]}`, "id: missing"},
		{"id null", `{"id": null, "seeds": ["https://a.example/"]}`, "id: missing"},
		{"id fraction", `{"id": 1.5, "seeds": ["https://a.example/"]}`, "id: want a whole number"},
		{"id bool", `{"id": true, "seeds": ["https://a.example/"]}`, "id: want a number, got boolean"},
		{"title number", `{"id": 1, "title": 5, "seeds": ["https://a.example/"]}`, "title: want a string, got number"},
		{"seeds missing", `{"id": 1}`, "seeds: missing"},
		{"seeds empty", `{"id": 1, "seeds": []}`, "seeds: no valid seed among 0"},
		{"seeds object", `{"id": 1, "seeds": {"a": 1}}`, "seeds: want a list of URLs, got object"},
		{"only bad seeds", `{"id": 1, "seeds": ["ftp://a.example/", 7, "http://", "https://exa mple.org/"]}`, "seeds: no valid seed among 4"},
		{"depth unknown", `{"id": 1, "seeds": ["https://a.example/"], "depth": "SHALLOW"}`, `depth: unknown value "SHALLOW"`},
		{"scope unknown", `{"id": 1, "seeds": ["https://a.example/"], "scope": "plus1Scope"}`, `scope: unknown value "plus1Scope"`},
		{"robots string", `{"id": 1, "seeds": ["https://a.example/"], "ignoreRobotsTxt": "yes"}`, "ignoreRobotsTxt: want a boolean, got string"},
		{"watched number", `{"id": 1, "seeds": ["https://a.example/"], "watched": 1}`, "watched: want a boolean, got number"},
		{"webrender string", `{"id": 1, "seeds": ["https://a.example/"], "webrender": "true"}`, "webrender: want a boolean, got string"},
		{"login list", `{"id": 1, "seeds": ["https://a.example/"], "loginPageUrl": []}`, "loginPageUrl: want a string, got list"},
		{"schedules object", `{"id": 1, "seeds": ["https://a.example/"], "schedules": {}}`, "schedules: want a list, got object"},
		{"schedule string", `{"id": 1, "seeds": ["https://a.example/"], "schedules": ["DAILY"]}`, "schedules[0]: want an object, got string"},
		{"schedule null", `{"id": 1, "seeds": ["https://a.example/"], "schedules": [{"startDate": "2024-01-01 00:00:00", "frequency": "DAILY"}, null]}`, "schedules[1]: want an object, got null"},
		{"second schedule bad", `{"id": 1, "seeds": ["https://a.example/"], "schedules": [{"startDate": "2024-01-01 00:00:00", "frequency": "DAILY"}, {"frequency": "HOURLY"}]}`, `schedules[1].frequency: unknown frequency "HOURLY"`},
		{"only null seeds", `{"id": 1, "seeds": [null, null]}`, "seeds: no valid seed among 2"},
		{"frequency missing", `{"id": 1, "seeds": ["https://a.example/"], "schedules": [{"startDate": "2024-01-01 00:00:00"}]}`, "schedules[0].frequency: missing"},
		{"frequency lower case", `{"id": 1, "seeds": ["https://a.example/"], "schedules": [{"frequency": "daily"}]}`, `schedules[0].frequency: unknown frequency "daily"`},
		{"end date bad", `{"id": 1, "seeds": ["https://a.example/"], "schedules": [{"frequency": "DAILY", "endDate": "2024-13-01 00:00:00"}]}`, `schedules[0].endDate: want "YYYY-MM-DD HH:MM:SS"`},
		{"date fraction", `{"id": 1, "seeds": ["https://a.example/"], "schedules": [{"frequency": "DAILY", "startDate": 1.5}]}`, "schedules[0].startDate: want epoch milliseconds as a whole number"},
		{"date bool", `{"id": 1, "seeds": ["https://a.example/"], "schedules": [{"frequency": "DAILY", "startDate": true}]}`, "schedules[0].startDate: want a \"YYYY-MM-DD HH:MM:SS\" string or epoch milliseconds, got boolean"},
		{"secret object", `{"id": 1, "seeds": ["https://a.example/"], "secretId": {"v": "x"}}`, "secretId: want a string or number"},
		{"every problem named", `{"id": "1", "seeds": [], "depth": 3}`, "id: want a number, got string; seeds: no valid seed among 0; depth: want a string, got number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseTarget([]byte(tc.line))
			if err == nil {
				t.Fatalf("parseTarget(%s) succeeded", tc.line)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("reason %q, want it to contain %q", err, tc.reason)
			}
		})
	}
}

func TestParseTargetDefaultsAndExtras(t *testing.T) {
	line := `{"ID": 42, "seeds": [" https://a.example/x ", "HTTP://B.example:8080/"], "depth": "", "scope": null,
		"webrender": true, "schedules": null, "secretId": null, "somethingNew": [1, {"x": null}]}`
	tg, warnings, err := parseTarget([]byte(line))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("parseTarget: %v %v", err, warnings)
	}
	if tg.ID != 42 || tg.Depth != DepthCapped || tg.Scope != ScopeRoot || !tg.WebRender || tg.Schedules != nil || tg.SecretID != "" ||
		!slices.Equal(tg.Seeds, []string{"https://a.example/x", "HTTP://B.example:8080/"}) {
		t.Errorf("target %+v", tg)
	}
	// Escaped strings take the decoder's slow path and come out unescaped.
	escaped := `{"id": 1, "title": "caf\u00e9 \"news\"", "seeds": ["https:\/\/a.example\/"], "loginPageUrl": "\u0068ttp://l/"}`
	tg, _, err = parseTarget([]byte(escaped))
	if err != nil || tg.Title != `café "news"` || tg.Seeds[0] != "https://a.example/" || tg.LoginPageURL != "http://l/" {
		t.Errorf("escaped line: %+v, %v", tg, err)
	}
}

func TestReadFeedLineHandling(t *testing.T) {
	bom := "\xef\xbb\xbf"
	long := `{"id": 9, "title": "` + strings.Repeat("x", 300) + `", "seeds": ["https://l.example/"]}`
	feed := bom + goodLine + "\r\n" + "   \r\n" + long + "\n\t\n" +
		strings.Replace(goodLine, `"id": 1`, `"id": 2`, 1) // last line without newline
	fr := FeedReader{MaxLineBytes: 200}
	targets, st := readAll(t, fr, strings.NewReader(feed), "mem")
	if len(targets) != 2 || targets[0].ID != 1 || targets[1].ID != 2 || targets[1].Line != 5 {
		t.Fatalf("targets %+v", targets)
	}
	if st.Lines != 5 || st.BadLines != 1 || st.Errors[0].Line != 3 || st.Errors[0].Reason != "line longer than 200 bytes" {
		t.Errorf("stats %+v", st)
	}
	// The same long line is fine under the default cap, and a line over
	// the default cap is not.
	huge := `{"id": 9, "title": "` + strings.Repeat("y", DefaultMaxLineBytes) + `", "seeds": ["https://l.example/"]}`
	targets, st = readAll(t, FeedReader{}, strings.NewReader(long+"\n"+huge+"\n"+goodLine), "mem")
	if len(targets) != 2 || st.BadLines != 1 || st.Errors[0].Line != 2 {
		t.Errorf("default cap: %d targets, stats %+v", len(targets), st.Errors)
	}
}

func TestReadFeedBoundsErrors(t *testing.T) {
	var b strings.Builder
	for range 500 {
		b.WriteString("{\n")
		b.WriteString(`{"id": 1, "seeds": ["mailto:x@example.org", "https://a.example/"]}` + "\n")
	}
	var logs bytes.Buffer
	fr := FeedReader{MaxErrors: 10, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	targets, st := readAll(t, fr, strings.NewReader(b.String()), "big")
	if len(targets) != 500 || st.BadLines != 500 || len(st.Errors) != 10 || st.DroppedSeeds != 500 || len(st.Warnings) != 10 {
		t.Fatalf("targets %d bad %d kept %d dropped %d kept %d", len(targets), st.BadLines, len(st.Errors), st.DroppedSeeds, len(st.Warnings))
	}
	if st.Errors[9].Line != 19 {
		t.Errorf("10th error at line %d, want 19", st.Errors[9].Line)
	}
	lines := strings.Count(logs.String(), "\n")
	if lines != 22 || !strings.Contains(logs.String(), `"count":490`) {
		t.Errorf("%d log lines, want 10+10 and two summaries:\n%s", lines, logs.String())
	}
}

// TestReadFeedStreams shows targets are handed on while the feed is still
// being written, so a feed is never held whole.
func TestReadFeedStreams(t *testing.T) {
	pr, pw := io.Pipe()
	got := make(chan int64)
	done := make(chan error, 1)
	go func() {
		_, err := FeedReader{}.ReadFeed(context.Background(), pr, "pipe", func(tg Target) error {
			got <- tg.ID
			return nil
		})
		done <- err
	}()
	for id := int64(1); id <= 3; id++ {
		line := strings.Replace(goodLine, `"id": 1`, fmt.Sprintf(`"id": %d`, id), 1)
		if _, err := io.WriteString(pw, line+"\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case g := <-got:
			if g != id {
				t.Fatalf("got target %d, want %d", g, id)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("target %d not delivered before the feed ended", id)
		}
	}
	_ = pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestReadFeedStops(t *testing.T) {
	feed := goodLine + "\n" + goodLine + "\n"
	stop := errors.New("stop")
	st, err := FeedReader{}.ReadFeed(context.Background(), strings.NewReader(feed), "f", func(Target) error { return stop })
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), "f:1: target 1") || st.Targets != 1 {
		t.Errorf("callback error: %v, stats %+v", err, st)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = FeedReader{}.ReadFeed(ctx, strings.NewReader(feed), "f", func(Target) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	readErr := errors.New("disk on fire")
	_, err = FeedReader{}.ReadFeed(context.Background(), io.MultiReader(strings.NewReader(goodLine+"\n"), errReader{readErr}),
		"f", func(Target) error { return nil })
	if !errors.Is(err, readErr) || !strings.Contains(err.Error(), "after line 1") {
		t.Errorf("read error: %v", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestSecretIDNeverLeaks feeds a secret through good and bad lines and
// checks logs, errors and the usual ways of printing a target.
func TestSecretIDNeverLeaks(t *testing.T) {
	const secret = "hunter2-SECRET-1234"
	lines := []string{
		`{"id": 1, "seeds": ["https://a.example/"], "secretId": "` + secret + `"}`,
		`{"id": 2, "seeds": ["https://a.example/"], "secretId": "` + secret + `", "schedules": [{"frequency": "HOURLY"}]}`,
		`{"id": "3", "secretId": "` + secret + `"}`,
		`{"id": 4, "secretId": "` + secret + `", "seeds": ["https://a.example/"`,
		`{"id": 5, "secretId": ["` + secret + `"], "seeds": ["https://a.example/"]}`,
		`{"id": 6, "secretId": ` + secret + `}`,
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	targets, st := readAll(t, FeedReader{Logger: logger}, strings.NewReader(strings.Join(lines, "\n")), "secret.jsonl")
	if len(targets) != 1 || st.BadLines != 5 {
		t.Fatalf("%d targets, %d bad lines", len(targets), st.BadLines)
	}
	tg := targets[0]
	if tg.SecretID.Reveal() != secret {
		t.Fatalf("secret not kept: %q", tg.SecretID.Reveal())
	}
	logger.Info("target", "target", tg, "secret", tg.SecretID)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("target", "target", tg, "secret", tg.SecretID)
	js, err := json.Marshal(tg)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{logs.String(), fmt.Sprint(tg), fmt.Sprintf("%+v %#v %s %q %x", tg, tg, tg.SecretID, tg.SecretID, tg.SecretID), string(js)}
	for _, e := range st.Errors {
		texts = append(texts, e.Error())
	}
	for i, text := range texts {
		if strings.Contains(text, secret) || strings.Contains(text, fmt.Sprintf("%x", secret)) {
			t.Errorf("text %d leaks the secret: %s", i, text)
		}
	}
	if !strings.Contains(texts[1], redacted) {
		t.Errorf("printed target does not show the redaction: %s", texts[1])
	}
}
