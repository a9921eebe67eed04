package main

import (
	"strings"
	"testing"
)

// Bad --runs settings are refused before anything is served or crawled.
func TestBenchRunsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--runs", "0"}, "want at least 1"},
		{[]string{"bench", "--runs", "-3"}, "want at least 1"},
		{[]string{"bench", "--runs", "2", "--cpuprofile", "x.prof"}, "use them with --runs 1"},
		{[]string{"bench", "--runs", "2", "--data", "d"}, "use them with --runs 1"},
		{[]string{"bench", "--runs", "two"}, "invalid value"},
		{[]string{"bench", "--site", "dir:"}, "names no directory"},
		{[]string{"bench", "--serve-site", "{not json"}, "--serve-site"},
		{[]string{"bench", "--serve-site", `{"kind":"elsewhere"}`}, `site "elsewhere" is not`},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Contains(stdout, "Benchmarking") {
			t.Errorf("%v: exit %d, stderr %q, want a refusal containing %q", c.args, code, stderr, c.want)
		}
	}
}
