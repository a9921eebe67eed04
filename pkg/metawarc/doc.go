// Package metawarc writes a launch's provenance into the archive itself, as
// NetarchiveSuite's metadata WARC does: one WARC file per launch holding
// its crawl.log lines, its reports, its harvest statistics, its CDX lines,
// the effective profile and sheets and its seeds, each a resource record
// with a metadata:// URI (URI documents them), written with
// pkg/warcwriter like every other WARC.
//
// A file is written in one go, under a staging directory inside the WARC
// directory, and renamed to its final, deterministic name only once it is
// closed and synced: a crash at any point leaves either nothing or the one
// complete file, never a part of one where movers look. Recover removes
// what a crash left in the staging directory; writing the same launch again
// finds the final file and keeps it.
package metawarc
