package extract

import (
	"bytes"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLOptions configures HTML extraction.
type HTMLOptions struct {
	Options
	// NoForms skips form actions (UKWA's noForms sheet). Without it, only
	// GET forms are followed, as Heritrix's extractOnlyFormGets does.
	NoForms bool
	// ObeyMetaNoFollow stops extraction at a robots meta tag saying
	// nofollow or none, keeping the links found before it, as Heritrix does
	// under the obey robots policy. Meta reports the tag either way.
	ObeyMetaNoFollow bool
	// Javascript scans inline <script> text, on* event-handler attributes
	// and javascript: links for speculative links (X, "=JS_MISC"), as
	// Heritrix's ExtractorHTML does with extractJavascript on. It is off
	// under UKWA's noJavascriptExtraction sheet.
	Javascript bool
}

// Meta is what the document says about itself.
type Meta struct {
	// Base is the base URL links were resolved against at the end of the
	// document: the document URL, or the first <base href>.
	Base string
	// NoFollow and NoIndex are set by <meta name="robots"> (and "none").
	NoFollow bool
	NoIndex  bool
	// Truncated is set when MaxBytes or MaxLinks stopped extraction early.
	Truncated bool
}

// HTML extracts links from an HTML document streamed from r, whose URL is
// base. The input is taken as UTF-8 or an ASCII-compatible encoding. The
// only error is a failed read of r; links found before it are returned.
func HTML(r io.Reader, base string, o HTMLOptions) ([]Link, Meta, error) {
	return htmlDoc(r, base, o, true)
}

// htmlDoc is HTML. fast takes the two shortcuts past the tokenizer's
// work: it reads through a textSkipper, and reads the attributes only of
// tags the prefilter (mayHoldLinks) passes. Without them it is the
// reference the differential tests hold the shortcuts to: every tag's
// attributes, every byte tokenized.
func htmlDoc(r io.Reader, base string, o HTMLOptions, fast bool) ([]Link, Meta, error) {
	o.Options = o.Options.withDefaults()
	h := &htmlExtractor{o: o, c: newCollector(o.Options), base: base, reference: !fast}
	lr := &limitReader{r: r, n: o.MaxBytes}
	var err error
	if fast {
		sk := newTextSkipper(lr)
		sk.direct = h.directTag
		err = h.run(html.NewTokenizer(sk), sk, 0)
	} else {
		err = h.run(html.NewTokenizer(lr), nil, 0)
	}
	meta := Meta{Base: h.base, NoFollow: h.noFollow, NoIndex: h.noIndex,
		Truncated: lr.truncated || h.c.full}
	return h.c.links, meta, readErr("html", lr.read, err)
}

// attr is one attribute of the current tag, kept only if it matters.
type attr struct {
	key, val string
	kind     attrKind
}

type attrKind uint8

const (
	attrIgnored  attrKind = iota
	attrHref              // href: navigational, element-specific handling
	attrLink              // cite, codebase: navigational
	attrEmbed             // src and friends: embedded resource
	attrSrcset            // srcset and friends: list of embedded resources
	attrResource          // data, classid, archive, code: relative to codebase
	attrStyle             // inline CSS
	attrScript            // on* event handler: JavaScript
	attrOther             // rel, method, name, content...: read by element logic
)

// kindOf classifies an attribute name (lower-cased by the tokenizer).
func kindOf(key []byte) attrKind {
	switch string(key) {
	case "href":
		return attrHref
	case "cite", "codebase":
		return attrLink
	case "src", "lowsrc", "background", "longdesc", "usemap", "profile", "datasrc", "poster",
		"data-src", "data-original", "data-lazy", "data-lazy-src", "data-full-src",
		"data-src-small", "data-src-medium":
		return attrEmbed
	case "srcset", "imagesrcset", "data-srcset", "data-lazy-srcset", "data-original-set", "data-full-srcset":
		return attrSrcset
	case "data", "classid", "archive", "code":
		return attrResource
	case "style":
		return attrStyle
	case "action", "method", "rel", "name", "http-equiv", "content", "property":
		return attrOther
	}
	if len(key) > 2 && key[0] == 'o' && key[1] == 'n' {
		return attrScript
	}
	return attrIgnored
}

// htmlExtractor holds the state of one HTML document.
type htmlExtractor struct {
	o        HTMLOptions
	c        *collector
	base     string
	baseSet  bool
	noFollow bool
	noIndex  bool
	stop     bool
	attrs    []attr
	spans    []attrSpan // a direct tag's attributes (direct.go)
	// reference reads every start tag's attributes (no prefilter).
	reference bool
}

// maxCommentDepth bounds re-tokenising of conditional comments.
const maxCommentDepth = 1

// run walks the token stream. It returns the tokenizer's final error
// (io.EOF when the input simply ended). sk, when not nil, is the
// tokenizer's reader, told when the text that follows may be skipped.
func (h *htmlExtractor) run(z *html.Tokenizer, sk *textSkipper, depth int) error {
	inStyle, inScript := false, false
	for {
		tt := z.Next()
		wasStyle, wasScript := inStyle, inScript
		inStyle, inScript = false, false
		dataNext := false // the tokenizer is in the data state after this token
		switch tt {
		case html.ErrorToken:
			return z.Err()
		case html.EndTagToken, html.CommentToken, html.DoctypeToken:
			dataNext = true
		}
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			var name string
			if raw := z.Raw(); h.reference || mayHoldLinks(raw) {
				name = h.startTag(z)
			} else {
				// Most tags (<p>, <li>, <div class=x>) carry no attribute
				// the extractor reads; the tokenizer's TagName and TagAttr
				// copy every name and value, so they are skipped.
				name = rawTagName(raw)
			}
			if tt == html.StartTagToken {
				switch name {
				case "style":
					inStyle = true
				case "script":
					inScript = true
				case "noscript", "noembed", "noframes":
					// Their content is markup worth scanning (tracking
					// pixels, fallback links), not raw text.
					z.NextIsNotRawText()
				}
			}
			dataNext = !rawTextElement(name) ||
				tt == html.StartTagToken && (name == "noscript" || name == "noembed" || name == "noframes")
		case html.TextToken:
			if wasStyle {
				h.css(string(z.Text()))
			} else if wasScript && h.o.Javascript {
				h.js(string(z.Text()))
			}
		case html.CommentToken:
			if depth < maxCommentDepth {
				h.conditionalComment(z.Text(), depth)
			}
		}
		if h.stop || h.c.full {
			return io.EOF
		}
		if sk != nil && dataNext && len(z.Buffered()) == 0 {
			sk.skipNext()
		}
	}
}

// rawTextElement reports whether x/net/html reads the content after this
// start tag as raw text (or RCDATA), not as markup.
func rawTextElement(name string) bool {
	switch name {
	case "iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp":
		return true
	}
	return false
}

// conditionalComment scans the markup inside <!--[if IE]>...<![endif]-->,
// which old sites use to load stylesheets and scripts.
func (h *htmlExtractor) conditionalComment(text []byte, depth int) {
	if !bytes.HasPrefix(text, []byte("[if")) {
		return
	}
	_ = h.run(html.NewTokenizer(bytes.NewReader(text)), nil, depth+1)
}

// startTag reads the current tag's interesting attributes and extracts its
// links. It returns the tag name.
func (h *htmlExtractor) startTag(z *html.Tokenizer) string {
	nb, more := z.TagName()
	name := atom.Lookup(nb).String()
	if name == "" {
		name = string(nb)
	}
	h.attrs = h.attrs[:0]
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		kind := kindOf(k)
		if kind == attrIgnored || h.droppable(kind, v) {
			continue
		}
		h.attrs = append(h.attrs, attr{key: string(k), val: string(v), kind: kind})
	}
	h.element(name)
	return name
}

// droppable reports whether a URL attribute value obviously yields no link,
// checked before copying it: data: URIs and junk can be megabytes.
func (h *htmlExtractor) droppable(kind attrKind, v []byte) bool {
	switch kind {
	case attrOther, attrStyle:
		return false
	case attrScript:
		return !h.o.Javascript
	case attrSrcset:
		if len(v) > maxSrcsetLen {
			return true
		}
	default:
		// Room for surrounding whitespace; add() applies the exact limit.
		if len(v) > h.o.MaxURLLength+256 {
			return true
		}
	}
	head := string(bytes.TrimLeft(v[:min(len(v), 16)], " \t\n\r\f"))
	if (kind == attrHref || kind == attrLink) && h.o.Javascript && javascriptURL(head) {
		return false
	}
	return unwantedScheme(head)
}

// maxSrcsetLen bounds a srcset list; real ones hold a dozen candidates.
const maxSrcsetLen = 64 << 10

func (h *htmlExtractor) get(key string) (string, bool) {
	for _, a := range h.attrs {
		if a.key == key {
			return a.val, true
		}
	}
	return "", false
}

// element extracts the links of one start tag.
func (h *htmlExtractor) element(name string) {
	switch name {
	case "meta":
		h.metaTag()
		return
	case "base":
		h.baseTag()
	case "link":
		h.linkTag()
	case "form":
		h.formTag()
	}
	var resources []attr
	for _, a := range h.attrs {
		ctx := name + "/@" + a.key
		switch a.kind {
		case attrHref:
			if name != "link" && name != "base" {
				h.link(a.val, ctx)
			}
		case attrLink:
			h.link(a.val, ctx)
		case attrEmbed:
			h.c.add(h.base, a.val, hopEmbed, ctx)
		case attrSrcset:
			if name != "link" || a.key != "imagesrcset" {
				h.srcset(a.val, ctx)
			}
		case attrResource:
			resources = append(resources, a)
		case attrStyle:
			h.css(a.val)
		case attrScript:
			h.js(a.val)
		}
	}
	if resources != nil {
		h.resources(name, resources)
	}
}

// link adds a navigational link, or scans a javascript: link's code as
// Heritrix's processLink does.
func (h *htmlExtractor) link(v, ctx string) {
	if h.o.Javascript {
		if t := strings.TrimLeft(v, " \t\n\r\f"); javascriptURL(t) {
			h.js(t[len("javascript:"):])
			return
		}
	}
	h.c.add(h.base, v, hopLink, ctx)
}

// javascriptURL reports whether s starts with the javascript: scheme.
func javascriptURL(s string) bool {
	return hasPrefixFold(s, "javascript:")
}

// js extracts speculative links from inline script code; Heritrix gives
// them no element context.
func (h *htmlExtractor) js(code string) {
	scanJS(code, h.base, func(ref string) bool {
		return h.c.add(h.base, ref, hopSpec, ContextJSMisc)
	})
}

func (h *htmlExtractor) srcset(v, ctx string) {
	for _, u := range srcsetURLs(v) {
		h.c.add(h.base, u, hopEmbed, ctx)
	}
}

// baseTag records <base href>: a link itself, and (the first one only) the
// base for everything after it.
func (h *htmlExtractor) baseTag() {
	href, ok := h.get("href")
	if !ok {
		return
	}
	h.c.add(h.base, href, hopLink, "base/@href")
	if h.baseSet {
		return
	}
	ref := cleanRef(href)
	if ref == "" || unwantedScheme(ref) {
		return
	}
	abs, err := h.o.Resolve(h.base, ref)
	if err != nil || !httpScheme(abs) {
		return
	}
	h.base, h.baseSet = abs, true
}

// linkTag handles <link>: embeds or links depending on rel.
func (h *htmlExtractor) linkTag() {
	if href, ok := h.get("href"); ok {
		if rel, ok := h.get("rel"); ok {
			if hop, ctx, ok := relHop(rel, "link", "/@href"); ok {
				h.c.add(h.base, href, hop, ctx)
			}
		}
	}
	if set, ok := h.get("imagesrcset"); ok {
		h.srcset(set, "link/@imagesrcset")
	}
}

// formTag follows GET form actions unless forms are off.
func (h *htmlExtractor) formTag() {
	action, ok := h.get("action")
	if !ok || h.o.NoForms {
		return
	}
	if method, ok := h.get("method"); ok && !strings.EqualFold(strings.TrimSpace(method), "get") {
		return
	}
	h.link(action, "form/@action")
}

// metaTag handles refresh, robots and URL-valued meta content.
func (h *htmlExtractor) metaTag() {
	content, ok := h.get("content")
	if !ok {
		return
	}
	equiv, _ := h.get("http-equiv")
	name, _ := h.get("name")
	switch {
	case strings.EqualFold(strings.TrimSpace(equiv), "refresh"):
		if u := refreshURL(content); u != "" {
			h.c.add(h.base, u, hopRedirect, ContextMeta)
		}
	case strings.EqualFold(strings.TrimSpace(name), "robots"):
		lc := strings.ToLower(content)
		none := strings.Contains(lc, "none")
		h.noFollow = h.noFollow || none || strings.Contains(lc, "nofollow")
		h.noIndex = h.noIndex || none || strings.Contains(lc, "noindex")
		if h.noFollow && h.o.ObeyMetaNoFollow {
			h.stop = true
		}
	default:
		// og:image and friends: absolute URLs are speculative links.
		c := strings.TrimSpace(content)
		if httpScheme(c) && strings.Contains(c, "://") {
			h.c.add(h.base, c, hopSpec, ContextMeta)
		}
	}
}

// resources handles object/applet data, classid, archive and code, which
// resolve against codebase when there is one.
func (h *htmlExtractor) resources(name string, res []attr) {
	base := h.base
	if cb, ok := h.get("codebase"); ok {
		if abs, err := h.o.Resolve(h.base, cleanRef(cb)); err == nil && httpScheme(abs) {
			base = abs
		}
	}
	for _, a := range res {
		ctx := name + "/@" + a.key
		vals := []string{a.val}
		if a.key == "archive" {
			vals = strings.Fields(a.val)
		}
		for _, v := range vals {
			if name == "applet" && a.key == "code" && !strings.HasSuffix(strings.ToLower(v), ".class") {
				v += ".class"
			}
			h.c.add(base, v, hopEmbed, ctx)
		}
	}
}

// css extracts url() and @import references from a style block or
// attribute; Heritrix files them all as embeds with no element context.
func (h *htmlExtractor) css(text string) {
	scanCSS(text, func(ref string) bool {
		return h.c.add(h.base, ref, hopEmbed, ContextEmbedMisc)
	})
}
