// Package crawllog writes Heritrix's crawl.log: one line per finished URI in
// Heritrix3's exact column format (ARCHITECTURE.md section 8), buffered and
// rotated daily at 00:00 UTC, next to the WARC files.
package crawllog
