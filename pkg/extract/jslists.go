package extract

// mediaMIMEType reports whether s is one of the audio, video and image MIME
// types Heritrix's UriUtils lists as false positives (exact, case
// sensitive, as there).
func mediaMIMEType(s string) bool {
	switch s {
	case
		"audio/aiff", "audio/asf", "audio/basic", "audio/m4a", "audio/mid", "audio/midi", "audio/mp3",
		"audio/mp4", "audio/mp4a-latm", "audio/mpeg", "audio/mpeg3", "audio/mpegurl", "audio/mpg",
		"audio/ogg", "audio/playlist", "audio/unknown", "audio/vnd.qcelp", "audio/vnd.rn-realaudio",
		"audio/wav", "audio/x-aiff", "audio/x-m4a", "audio/x-midi", "audio/x-mp3", "audio/x-mpeg",
		"audio/x-mpeg3", "audio/x-mpegurl", "audio/x-ms-wax", "audio/x-ms-wma", "audio/x-ms-wmv",
		"audio/x-pn-realaudio", "audio/x-pn-realaudio-plugin", "audio/x-realaudio", "audio/x-scpls",
		"audio/x-wav", "image/bitmap", "image/bmp", "image/BMP", "image/cur", "image/fits", "image/gif",
		"image/GIF", "image/ico", "image/icon", "image/jp2", "image/jpeg", "image/JPEG",
		"image/jpeg-cmyk", "image/jpg", "image/JPG", "image/pdf", "image/pict", "image/pjpeg",
		"image/png", "image/PNG", "image/svg+xml", "image/tiff", "image/vnd.adobe.photoshop",
		"image/vnd.djvu", "image/vnd.dwg", "image/vnd.dxf", "image/vnd.microsoft.icon",
		"image/vnd.ms-modi", "image/vnd.ms-photo", "image/vnd.wap.wbmp", "image/x-bitmap", "image/x-bmp",
		"image/x-citrix-pjpeg", "image/x-dcraw", "image/x-djvu", "image/x.djvu", "image/x-emf",
		"image/x-eps", "image/x-guffaw", "image/x-ico", "image/xicon", "image/x-icon", "image/x-jg",
		"image/x-ms-bmp", "image/x-MS-bmp", "image/x-pcx", "image/x-photoshop", "image/x-pict",
		"image/x-png", "image/x-portable-anymap", "image/x-portable-bitmap", "image/x-portable-graymap",
		"image/x-portable-pixmap", "image/x-psd", "image/x-quicktime", "image/x-rgb",
		"image/x-windows-bmp", "image/x-wmf", "image/x-xbitmap", "image/x-xbm", "image/x-xfig",
		"image/x-xpixmap", "video/3gpp", "video/asx", "video/avi", "video/f4v", "video/flv", "video/m4v",
		"video/mp4", "video/MP4", "video/mp4v-es", "video/mpeg", "video/mpeg3", "video/mpeg4",
		"video/mpg4", "video/msvideo", "video/ogg", "video/quicktime", "video/swf", "video/unknown",
		"video/vnd.objectvideo", "video/webm", "video/wmv", "video/x-dv", "video/x-flv", "video/x-m4v",
		"video/x-mp4", "video/x-mpeg", "video/x-ms-asf", "video/x-ms-asx", "video/x-msvideo",
		"video/x-ms-wm", "video/x-ms-wma", "video/x-ms-wmv", "video/x-ms-wmx", "video/x-ms-wvx",
		"video/x-pn-realaudio", "video/x-pn-realvideo", "video/x-sgi-movie", "video/x-swf":
		return true
	}
	return false
}

// htmlTag reports whether s (lower case) is an HTML element name in
// Heritrix's UriUtils.HTML_TAGS, used to reject CSS selectors like "div.menu".
func htmlTag(s string) bool {
	switch s {
	case
		"a", "abbr", "acronym", "address", "applet", "area", "article", "aside", "audio", "b", "base",
		"basefont", "bdi", "bdo", "big", "blockquote", "body", "br", "button", "canvas", "caption",
		"center", "cite", "code", "col", "colgroup", "command", "datalist", "dd", "del", "details",
		"dfn", "dir", "div", "dl", "dt", "em", "embed", "fieldset", "figcaption", "figure", "font",
		"footer", "form", "frame", "frameset", "head", "header", "hgroup", "h1", "h2", "h3", "h4", "h5",
		"h6", "hr", "html", "i", "iframe", "img", "input", "ins", "kbd", "keygen", "label", "legend",
		"li", "link", "map", "mark", "menu", "meta", "meter", "nav", "noframes", "noscript", "object",
		"ol", "optgroup", "option", "output", "p", "param", "pre", "progress", "q", "rp", "rt", "ruby",
		"s", "samp", "script", "section", "select", "small", "source", "span", "strike", "strong",
		"style", "sub", "summary", "sup", "table", "tbody", "td", "textarea", "tfoot", "th", "thead",
		"time", "title", "tr", "track", "tt", "u", "ul", "var", "video", "wbr":
		return true
	}
	return false
}

// webExtension reports whether ext (lower case, no dot) is the extension
// of a file type web servers serve and pages link: documents, scripts,
// styles, data, images, media, fonts and downloads. It is what tells a
// relative path ("img/logo.png") from a dotted identifier ("os.path",
// "config.debug") or a source file name ("index.rst") in a script.
func webExtension(ext string) bool {
	switch ext {
	case
		// Pages and server scripts.
		"html", "htm", "xhtml", "shtml", "php", "asp", "aspx", "jsp", "jspx", "cfm", "cgi",
		// Scripts, styles and data.
		"js", "mjs", "css", "json", "jsonld", "xml", "rss", "atom", "rdf", "txt", "csv", "webmanifest", "wasm",
		// Images.
		"png", "jpg", "jpeg", "gif", "svg", "svgz", "webp", "avif", "ico", "bmp", "tif", "tiff",
		// Audio, video, subtitles and streaming manifests.
		"mp3", "mp4", "m4a", "m4v", "webm", "ogg", "oga", "ogv", "opus", "wav", "flac", "aac", "mov", "avi",
		"wmv", "flv", "swf", "m3u8", "mpd", "vtt", "srt",
		// Fonts.
		"woff", "woff2", "ttf", "otf", "eot",
		// Documents and downloads.
		"pdf", "epub", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "rtf",
		"zip", "gz", "tgz", "tar", "bz2", "xz", "7z", "rar", "jar", "dmg", "exe", "msi":
		return true
	}
	return false
}

// namespaceName reports whether hostPath (an absolute URL after "//") is
// one of the XML namespace names every DOM library carries
// (createElementNS): identifiers in URL form, never fetched by the
// script.
func namespaceName(hostPath string) bool {
	switch hostPath {
	case "www.w3.org/2000/svg", "www.w3.org/1999/xhtml", "www.w3.org/1999/xlink",
		"www.w3.org/XML/1998/namespace", "www.w3.org/2000/xmlns/", "www.w3.org/1998/Math/MathML":
		return true
	}
	return false
}
