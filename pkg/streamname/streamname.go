// Package streamname names a crawl stream's parts the same way in every
// role (ARCHITECTURE.md section 3): the frequent crawl (fc) has streams
// with separate legal bases (npld, bypm), each with its own topics,
// frontier and output directories; the domain crawl (dc) has one.
package streamname

import "fmt"

// Validate checks a crawl and stream: fc with npld or bypm, or dc (whose
// stream is ignored).
func Validate(crawl, stream string) error {
	switch crawl {
	case "fc":
		if stream != "npld" && stream != "bypm" {
			return fmt.Errorf("stream %q: want npld or bypm", stream)
		}
	case "dc":
	default:
		return fmt.Errorf("crawl %q: want fc or dc", crawl)
	}
	return nil
}

// Name is the frontier and output name: "fc-npld", "fc-bypm" or "dc".
func Name(crawl, stream string) string {
	if crawl == "dc" {
		return "dc"
	}
	return crawl + "-" + stream
}

// History is the stream whose recently-crawled history a role reads and
// its events name: the stream in the frequent crawl, "" in the domain
// crawl, which has none.
func History(crawl, stream string) string {
	if crawl == "dc" {
		return ""
	}
	return stream
}

// Topic is a per-stream topic: "fc.<kind>.<stream>", or "dc.<kind>".
func Topic(crawl, stream, kind string) string {
	if crawl == "dc" {
		return "dc." + kind
	}
	return crawl + "." + kind + "." + stream
}
