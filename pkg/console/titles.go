package console

import (
	"context"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/explain"
	"github.com/trawler-crawl/trawler/pkg/replay"
)

// Replayer answers a capture from the archive: pkg/replay's Resolver,
// with pywb's rules.
type Replayer interface {
	Resolve(ctx context.Context, url, timestamp string) (*replay.Response, error)
}

// Bounds of the titles read for a URL page: the newest captures only,
// and the start of each page, where its <title> is.
const (
	maxTitled      = 10
	titleReadBytes = 256 << 10
	maxTitleRunes  = 300
)

// titles reads the <title> of each HTML capture among the newest
// maxTitled, by replaying it from the archive; "" where there is none or
// it cannot be read. Titles come from crawled pages, so they are hostile
// text: the templates print them escaped, never as markup.
func (c *Console) titles(ctx context.Context, caps []explain.Capture) []string {
	out := make([]string, len(caps))
	if c.d.Replay == nil {
		return out
	}
	for i := len(caps) - 1; i >= 0 && i >= len(caps)-maxTitled; i-- {
		cp := caps[i]
		// A revisit (of this URL or, deduplicated, of another) is read
		// through to its original, as replay does.
		if !strings.Contains(cp.MimeType, "html") && cp.MimeType != cdx.RevisitMime || ctx.Err() != nil {
			continue
		}
		resp, err := c.d.Replay.Resolve(ctx, cp.URL, cp.Timestamp)
		if err != nil {
			c.log.Debug("capture's title not read", "url", cp.URL, "timestamp", cp.Timestamp, "err", err)
			continue
		}
		if strings.Contains(resp.Header.Get("Content-Type"), "html") {
			out[i] = pageTitle(io.LimitReader(resp.Body, titleReadBytes), resp.Header.Get("Content-Encoding"))
		}
		_ = resp.Body.Close()
	}
	return out
}

// pageTitle is the text of the first <title> of an HTML document, its
// whitespace collapsed and its length bounded; "" for a body in a content
// coding (the start of a gzip stream has no title to read).
func pageTitle(r io.Reader, contentEncoding string) string {
	if contentEncoding != "" && !strings.EqualFold(contentEncoding, "identity") {
		return ""
	}
	z := html.NewTokenizer(r)
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken:
			if name, _ := z.TagName(); atom.Lookup(name) != atom.Title {
				continue
			}
			if z.Next() != html.TextToken {
				return ""
			}
			t := strings.Join(strings.Fields(string(z.Text())), " ")
			if r := []rune(t); len(r) > maxTitleRunes {
				t = string(r[:maxTitleRunes]) + "…"
			}
			return t
		}
	}
}
