// Package warcwriter writes crawl captures to gzip-compressed WARC files
// (ARCHITECTURE.md section 7): WARC/1.0 by default, as Heritrix writes them
// (14-digit WARC-Date, the 1.0 revisit profiles), or WARC/1.1 with
// millisecond dates when Config.Version asks for it.
//
// Records are built, digested and serialised by github.com/nlnwa/gowarc; this
// package adds what gowarc's WarcFileWriter cannot give a crawler: every record
// of one capture (request, response or revisit, metadata) lands in the same
// file, the exact offset and compressed length of the response record are
// returned so that crawl events can point into the file, a failed capture is
// cut back out of the file, and files left ".open" by a crash can be repaired
// with RecoverOpen.
//
// Files are named {prefix}-{yyyyMMddHHmmssSSS}-{serial:05d}-{hostname}.warc.gz,
// carry a ".open" suffix while written, start with a warcinfo record, hold one
// gzip member per record, and are closed once they reach Config.MaxFileSize.
// A Writer keeps Config.Parallel files open so that many crawl goroutines can
// write at the same time; each file is used by one goroutine at a time.
package warcwriter
