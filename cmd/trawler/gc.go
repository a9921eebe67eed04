package main

import (
	"os"
	"runtime/debug"
)

// standaloneGCPercent is the single-process default for the garbage
// collector. A standalone crawl allocates briskly (each page is parsed,
// re-encoded and gzipped) while its live heap stays small, so collecting at
// 300% growth instead of 100% saves CPU per page. 400% saved a little more
// (measured with `trawler bench` on 18k pages: 1,248 -> 1,533 pages/s at
// 100 -> 400, peak RSS 132 -> 196 MB), but on the documentation site, whose
// 128 threads each hold a 100 KB page three times over, one run of seven
// peaked at 323 MB; at 300 three runs peaked at 175-208 MB, within the
// 300 MB a standalone crawl may use, at a CPU cost lost in this VM's noise.
// Large standalone crawls, whose embedded broker holds the journal in
// memory, should set GOGC or GOMEMLIMIT to suit the machine.
const standaloneGCPercent = 300

// tuneGC applies the single-process default unless the operator set GOGC,
// which always wins (GOMEMLIMIT is left to the operator too).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(standaloneGCPercent)
	}
}
