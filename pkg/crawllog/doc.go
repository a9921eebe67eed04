// Package crawllog writes Heritrix's crawl.log: one line per finished URI in
// Heritrix3's column format (ARCHITECTURE.md section 8), rotated daily at
// 00:00 UTC, next to the WARC files.
//
// # Columns
//
// AppendLine follows Heritrix's UriProcessingFormatter. The size column is
// what the caller puts in Entry.Size: for an HTTP response Heritrix's
// CrawlURI.getContentLength (the message body as recorded, headers not
// included), otherwise getContentSize (the bytes recorded, e.g. a DNS
// record). Where Heritrix would let a value add columns or split the line,
// Trawler escapes it: spaces, control characters, DEL and Unicode spaces or
// line separators become %XX per byte in every column, ',' becomes %2C
// inside an annotation, and the extra-info JSON is compacted with \uXXXX
// escapes inside strings. Well-formed values are never changed, so normal
// lines are Heritrix's byte for byte (see AppendLine for the rules).
//
// # Durability
//
// Writer.Write formats the line into a reused buffer and writes it with one
// write(2) to the O_APPEND file before it returns; nothing waits in a
// user-space buffer, so SIGKILL cannot lose a line whose Write returned,
// nor tear one (the page cache belongs to the kernel). A goroutine fsyncs
// once a second when lines were written, and the file is fsynced at
// rotation and Close, which bounds what a machine crash can lose. The cost
// is one system call per line, a few microseconds (BenchmarkWriterWrite),
// against a 64 KiB buffer flushed every second before, which lost up to a
// second of lines (and tore the last) when a worker was killed.
//
// What this package cannot see is a capture whose process died between
// writing the WARC records and writing the line; the worker repairs that at
// start from the WARC files (CaptureKey and LineKey match captures to
// lines).
package crawllog
