package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLogDurations: JSON logs give durations as seconds with the unit in
// the key, not as nanoseconds; text logs keep Go's readable form.
func TestLogDurations(t *testing.T) {
	tests := []struct {
		name   string
		format string
		log    func(*slog.Logger)
		want   []string // substrings of the line
		absent []string
	}{
		{"json duration", "json", func(l *slog.Logger) { l.Info("done", "elapsed", 10*time.Second) },
			[]string{`"elapsed_seconds":10`}, []string{`"elapsed":`, "10000000000"}},
		{"json fraction", "json", func(l *slog.Logger) { l.Info("done", "duration", 1500*time.Millisecond) },
			[]string{`"duration_seconds":1.5`}, nil},
		{"json key already in seconds", "json", func(l *slog.Logger) { l.Info("done", "wait_seconds", 2*time.Second) },
			[]string{`"wait_seconds":2`}, []string{"wait_seconds_seconds"}},
		{"json duration in a group", "json", func(l *slog.Logger) { l.Info("done", slog.Group("run", "took", time.Minute)) },
			[]string{`"run":{"took_seconds":60}`}, nil},
		{"json other values untouched", "json", func(l *slog.Logger) { l.Info("done", "uris", 3, "elapsed", "10s") },
			[]string{`"uris":3`, `"elapsed":"10s"`}, []string{"_seconds"}},
		{"text keeps readable durations", "text", func(l *slog.Logger) { l.Info("done", "elapsed", 10*time.Second) },
			[]string{"elapsed=10s"}, []string{"_seconds"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			l, err := newLogger(tc.format, "info", &b)
			if err != nil {
				t.Fatal(err)
			}
			tc.log(l)
			line := b.String()
			if tc.format == "json" && !json.Valid([]byte(line)) {
				t.Fatalf("not JSON: %s", line)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("log line %s lacks %s", line, w)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(line, a) {
					t.Errorf("log line %s has %s", line, a)
				}
			}
		})
	}
}
