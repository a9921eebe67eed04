package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// newLogger builds the logger of a command: format is json, text or auto
// (text on a terminal), level a slog level name. JSON logs give durations
// in seconds with the unit in the key (see secondsAttr); text logs keep
// Go's readable form ("1.5s").
func newLogger(format, level string, w io.Writer) (*slog.Logger, error) {
	return newLoggerVar(format, level, new(slog.LevelVar), w)
}

// newLoggerVar is newLogger with its level in lv, so that it can be
// changed while the command runs (URLFrontier's SetLogLevel).
func newLoggerVar(format, level string, lv *slog.LevelVar, w io.Writer) (*slog.Logger, error) {
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	if format == "auto" {
		format = "json"
		if isTerminal(w) {
			format = "text"
		}
	}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lv, ReplaceAttr: secondsAttr})), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), nil
	}
	return nil, fmt.Errorf("log format %q: want json, text or auto", format)
}

// secondsAttr is the JSON handler's ReplaceAttr: a time.Duration, which
// slog writes as integer nanoseconds ("elapsed":10000000000), becomes
// seconds as a number with the unit in its key ("elapsed_seconds":10), as
// the metrics name their units. A key already ending in _seconds keeps
// its name.
func secondsAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	key := a.Key
	if !strings.HasSuffix(key, "_seconds") {
		key += "_seconds"
	}
	return slog.Float64(key, a.Value.Duration().Seconds())
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
