package robots

import (
	"strings"
	"testing"
)

// The expectations of Google's robots.txt test suite (google/robotstxt,
// robots_test.cc, the reference for RFC 9309), as test data: each case is
// one EXPECT of IsUserAgentAllowed there, with Google's answer. Where
// Trawler answers otherwise on purpose (a Google-only extension, or a
// Heritrix-compatible choice), the case says what Trawler answers and why;
// docs/architecture.md (section 6, Robots) lists the same differences.
//
// Google's matcher takes a product token ("FooBot") and a URL; Trawler's
// takes the crawler's User-Agent and the URL's path and query, which
// rawPathQuery cuts out as Google's GetPathParamsQuery does (no
// re-encoding: the worker's URLs are already WHATWG-normalised).

type googleCase struct {
	test, robots, agent, url string
	google                   bool
	// differs, when set, is why Trawler answers !google.
	differs string
}

const (
	fooDisallowAll = "user-agent: FooBot\ndisallow: /\n"
	groups         = "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\nuser-agent: BarBot\ndisallow: /\nallow: /y/\n\n\nallow: /w/\nuser-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n"
	caseUpper      = "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n"
	caseLower      = "user-agent: FooBot\nallow: /x/\ndisallow: /\n"
	caseCamel      = "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n"
	uaUpper        = "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n"
	uaLower        = "User-Agent: foo bar\nAllow: /x/\nDisallow: /\n"
	uaCamel        = "User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n"
	globalGroup    = "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n"
	onlySpecific   = "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n"
	fish           = "user-agent: FooBot\ndisallow: /\nallow: /fish\n"
	fishStar       = "user-agent: FooBot\ndisallow: /\nallow: /fish*\n"
	fishSlash      = "user-agent: FooBot\ndisallow: /\nallow: /fish/\n"
	php            = "user-agent: FooBot\ndisallow: /\nallow: /*.php\n"
	phpEnd         = "user-agent: FooBot\ndisallow: /\nallow: /*.php$\n"
	fishPHP        = "user-agent: FooBot\ndisallow: /\nallow: /fish*.php\n"
)

// spaceToken is Heritrix's reading of a User-agent value: the whole value,
// lower-cased, contained in the crawler's User-Agent; Google reads only up
// to the first space.
const spaceToken = "Heritrix matches the whole User-agent value (\"foo bar\") against the crawler's User-Agent; Google only its first word"

var googleCases = []googleCase{
	// GoogleOnly_SystemTest
	{"SystemTest", "", "FooBot", "", true, ""},
	{"SystemTest", fooDisallowAll, "", "", true, ""},
	// Google disallows an empty URL; Trawler reads it as "/", which FooBot
	// may not fetch either.
	{"SystemTest", fooDisallowAll, "FooBot", "", false, ""},
	{"SystemTest", "", "", "", true, ""},
	// ID_LineSyntax_Line
	{"LineSyntax_Line", "user-agent: FooBot\ndisallow: /\n", "FooBot", "http://foo.bar/x/y", false, ""},
	{"LineSyntax_Line", "foo: FooBot\nbar: /\n", "FooBot", "http://foo.bar/x/y", true, ""},
	{"LineSyntax_Line", "user-agent FooBot\ndisallow /\n", "FooBot", "http://foo.bar/x/y", false,
		"Google assumes a missing colon; RFC 9309's grammar and Heritrix require it, so the lines are not read"},
	// ID_LineSyntax_Groups
	{"LineSyntax_Groups", groups, "FooBot", "http://foo.bar/x/b", true, ""},
	{"LineSyntax_Groups", groups, "FooBot", "http://foo.bar/z/d", true, ""},
	{"LineSyntax_Groups", groups, "FooBot", "http://foo.bar/y/c", false, ""},
	{"LineSyntax_Groups", groups, "BarBot", "http://foo.bar/y/c", true, ""},
	{"LineSyntax_Groups", groups, "BarBot", "http://foo.bar/w/a", true, ""},
	{"LineSyntax_Groups", groups, "BarBot", "http://foo.bar/z/d", false, ""},
	{"LineSyntax_Groups", groups, "BazBot", "http://foo.bar/z/d", true, ""},
	{"LineSyntax_Groups", groups, "FooBot", "http://foo.bar/foo/bar/", false, ""},
	{"LineSyntax_Groups", groups, "BarBot", "http://foo.bar/foo/bar/", false, ""},
	{"LineSyntax_Groups", groups, "BazBot", "http://foo.bar/foo/bar/", false, ""},
	// ID_LineSyntax_Groups_OtherRules
	{"Groups_OtherRules", "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n", "FooBot", "http://foo.bar/", false, ""},
	{"Groups_OtherRules", "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n", "BarBot", "http://foo.bar/", false, ""},
	{"Groups_OtherRules", "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n", "FooBot", "http://foo.bar/", false, ""},
	{"Groups_OtherRules", "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n", "BarBot", "http://foo.bar/", false, ""},
	// ID_REPLineNamesCaseInsensitive
	{"LineNamesCase", caseUpper, "FooBot", "http://foo.bar/x/y", true, ""},
	{"LineNamesCase", caseLower, "FooBot", "http://foo.bar/x/y", true, ""},
	{"LineNamesCase", caseCamel, "FooBot", "http://foo.bar/x/y", true, ""},
	{"LineNamesCase", caseUpper, "FooBot", "http://foo.bar/a/b", false, ""},
	{"LineNamesCase", caseLower, "FooBot", "http://foo.bar/a/b", false, ""},
	{"LineNamesCase", caseCamel, "FooBot", "http://foo.bar/a/b", false, ""},
	// ID_UserAgentValueCaseInsensitive
	{"UserAgentValueCase", uaUpper, "Foo", "http://foo.bar/x/y", true, ""},
	{"UserAgentValueCase", uaLower, "Foo", "http://foo.bar/x/y", true, ""},
	{"UserAgentValueCase", uaCamel, "Foo", "http://foo.bar/x/y", true, ""},
	{"UserAgentValueCase", uaUpper, "Foo", "http://foo.bar/a/b", false, spaceToken},
	{"UserAgentValueCase", uaLower, "Foo", "http://foo.bar/a/b", false, spaceToken},
	{"UserAgentValueCase", uaCamel, "Foo", "http://foo.bar/a/b", false, spaceToken},
	{"UserAgentValueCase", uaUpper, "foo", "http://foo.bar/x/y", true, ""},
	{"UserAgentValueCase", uaLower, "foo", "http://foo.bar/x/y", true, ""},
	{"UserAgentValueCase", uaCamel, "foo", "http://foo.bar/x/y", true, ""},
	{"UserAgentValueCase", uaUpper, "foo", "http://foo.bar/a/b", false, spaceToken},
	{"UserAgentValueCase", uaLower, "foo", "http://foo.bar/a/b", false, spaceToken},
	{"UserAgentValueCase", uaCamel, "foo", "http://foo.bar/a/b", false, spaceToken},
	// GoogleOnly_AcceptUserAgentUpToFirstSpace
	{"UpToFirstSpace", "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n", "Foo", "http://foo.bar/x/y", true, spaceToken},
	{"UpToFirstSpace", "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n", "Foo Bar", "http://foo.bar/x/y", false,
		"Google ignores a crawler token with a space; Trawler's User-Agent always has spaces, and \"foo bar\" is in it"},
	// ID_GlobalGroups_Secondary
	{"GlobalGroups", "", "FooBot", "http://foo.bar/x/y", true, ""},
	{"GlobalGroups", globalGroup, "FooBot", "http://foo.bar/x/y", false, ""},
	{"GlobalGroups", globalGroup, "BarBot", "http://foo.bar/x/y", true, ""},
	{"GlobalGroups", onlySpecific, "QuxBot", "http://foo.bar/x/y", true, ""},
	// ID_AllowDisallow_Value_CaseSensitive
	{"ValueCaseSensitive", "user-agent: FooBot\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/y", false, ""},
	{"ValueCaseSensitive", "user-agent: FooBot\ndisallow: /X/\n", "FooBot", "http://foo.bar/x/y", true, ""},
	// ID_LongestMatch
	{"LongestMatch", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", "FooBot", "http://foo.bar/x/page.html", false, ""},
	{"LongestMatch", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/page.html", true, ""},
	{"LongestMatch", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/", false, ""},
	{"LongestMatch", "user-agent: FooBot\ndisallow: \nallow: \n", "FooBot", "http://foo.bar/x/page.html", true, ""},
	{"LongestMatch", "user-agent: FooBot\ndisallow: /\nallow: /\n", "FooBot", "http://foo.bar/x/page.html", true, ""},
	{"LongestMatch", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x", false, ""},
	{"LongestMatch", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x/", true, ""},
	{"LongestMatch", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", "FooBot", "http://foo.bar/x/page.html", true, ""},
	{"LongestMatch", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://foo.bar/page.html", false, ""},
	{"LongestMatch", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://foo.bar/page", true, ""},
	{"LongestMatch", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", "http://foo.bar/x/page.html", true, ""},
	{"LongestMatch", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", "http://foo.bar/x/y.html", false, ""},
	{"LongestMatch", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://foo.bar/x/page", true, ""},
	{"LongestMatch", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://foo.bar/y/page", false, ""},
	// ID_Encoding
	{"Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", "FooBot", "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true, ""},
	{"Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true, ""},
	{"Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot", "http://foo.bar/foo/bar/ツ", false, ""},
	{"Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true, ""},
	{"Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "http://foo.bar/foo/bar/ツ", false, ""},
	{"Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "http://foo.bar/foo/bar/baz", false, ""},
	{"Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "http://foo.bar/foo/bar/%62%61%7A", true, ""},
	// ID_SpecialCharacters
	{"SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo/bar/quz", false, ""},
	{"SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo/quz", true, ""},
	{"SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo//quz", true, ""},
	{"SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo/bax/quz", true, ""},
	{"SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar", false, ""},
	{"SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar/qux", true, ""},
	{"SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar/", true, ""},
	{"SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar/baz", true, ""},
	{"SpecialCharacters", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", "FooBot", "http://foo.bar/foo/bar", true, ""},
	{"SpecialCharacters", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", "FooBot", "http://foo.bar/foo/quz", false, ""},
	// GoogleOnly_IndexHTMLisDirectory
	{"IndexHTMLisDirectory", "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n", "foobot", "http://foo.com/allowed-slash/", true,
		"Google reads an allowed index.html as its directory allowed; RFC 9309 and Heritrix do not"},
	{"IndexHTMLisDirectory", "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n", "foobot", "http://foo.com/allowed-slash/index.htm", false, ""},
	{"IndexHTMLisDirectory", "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n", "foobot", "http://foo.com/allowed-slash/index.html", true, ""},
	{"IndexHTMLisDirectory", "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n", "foobot", "http://foo.com/anyother-url", false, ""},
	// GoogleOnly_DocumentationChecks
	{"Doc/fish", fish, "FooBot", "http://foo.bar/bar", false, ""},
	{"Doc/fish", fish, "FooBot", "http://foo.bar/fish", true, ""},
	{"Doc/fish", fish, "FooBot", "http://foo.bar/fish.html", true, ""},
	{"Doc/fish", fish, "FooBot", "http://foo.bar/fish/salmon.html", true, ""},
	{"Doc/fish", fish, "FooBot", "http://foo.bar/fishheads", true, ""},
	{"Doc/fish", fish, "FooBot", "http://foo.bar/fishheads/yummy.html", true, ""},
	{"Doc/fish", fish, "FooBot", "http://foo.bar/fish.html?id=anything", true, ""},
	{"Doc/fish", fish, "FooBot", "http://foo.bar/Fish.asp", false, ""},
	{"Doc/fish", fish, "FooBot", "http://foo.bar/catfish", false, ""},
	{"Doc/fish", fish, "FooBot", "http://foo.bar/?id=fish", false, ""},
	{"Doc/fish*", fishStar, "FooBot", "http://foo.bar/bar", false, ""},
	{"Doc/fish*", fishStar, "FooBot", "http://foo.bar/fish", true, ""},
	{"Doc/fish*", fishStar, "FooBot", "http://foo.bar/fish.html", true, ""},
	{"Doc/fish*", fishStar, "FooBot", "http://foo.bar/fish/salmon.html", true, ""},
	{"Doc/fish*", fishStar, "FooBot", "http://foo.bar/fishheads", true, ""},
	{"Doc/fish*", fishStar, "FooBot", "http://foo.bar/fishheads/yummy.html", true, ""},
	{"Doc/fish*", fishStar, "FooBot", "http://foo.bar/fish.html?id=anything", true, ""},
	{"Doc/fish*", fishStar, "FooBot", "http://foo.bar/Fish.bar", false, ""},
	{"Doc/fish*", fishStar, "FooBot", "http://foo.bar/catfish", false, ""},
	{"Doc/fish*", fishStar, "FooBot", "http://foo.bar/?id=fish", false, ""},
	{"Doc/fish/", fishSlash, "FooBot", "http://foo.bar/bar", false, ""},
	{"Doc/fish/", fishSlash, "FooBot", "http://foo.bar/fish/", true, ""},
	{"Doc/fish/", fishSlash, "FooBot", "http://foo.bar/fish/salmon", true, ""},
	{"Doc/fish/", fishSlash, "FooBot", "http://foo.bar/fish/?salmon", true, ""},
	{"Doc/fish/", fishSlash, "FooBot", "http://foo.bar/fish/salmon.html", true, ""},
	{"Doc/fish/", fishSlash, "FooBot", "http://foo.bar/fish/?id=anything", true, ""},
	{"Doc/fish/", fishSlash, "FooBot", "http://foo.bar/fish", false, ""},
	{"Doc/fish/", fishSlash, "FooBot", "http://foo.bar/fish.html", false, ""},
	{"Doc/fish/", fishSlash, "FooBot", "http://foo.bar/Fish/Salmon.html", false, ""},
	{"Doc/*.php", php, "FooBot", "http://foo.bar/bar", false, ""},
	{"Doc/*.php", php, "FooBot", "http://foo.bar/filename.php", true, ""},
	{"Doc/*.php", php, "FooBot", "http://foo.bar/folder/filename.php", true, ""},
	{"Doc/*.php", php, "FooBot", "http://foo.bar/folder/filename.php?parameters", true, ""},
	{"Doc/*.php", php, "FooBot", "http://foo.bar//folder/any.php.file.html", true, ""},
	{"Doc/*.php", php, "FooBot", "http://foo.bar/filename.php/", true, ""},
	{"Doc/*.php", php, "FooBot", "http://foo.bar/index?f=filename.php/", true, ""},
	{"Doc/*.php", php, "FooBot", "http://foo.bar/php/", false, ""},
	{"Doc/*.php", php, "FooBot", "http://foo.bar/index?php", false, ""},
	{"Doc/*.php", php, "FooBot", "http://foo.bar/windows.PHP", false, ""},
	{"Doc/*.php$", phpEnd, "FooBot", "http://foo.bar/bar", false, ""},
	{"Doc/*.php$", phpEnd, "FooBot", "http://foo.bar/filename.php", true, ""},
	{"Doc/*.php$", phpEnd, "FooBot", "http://foo.bar/folder/filename.php", true, ""},
	{"Doc/*.php$", phpEnd, "FooBot", "http://foo.bar/filename.php?parameters", false, ""},
	{"Doc/*.php$", phpEnd, "FooBot", "http://foo.bar/filename.php/", false, ""},
	{"Doc/*.php$", phpEnd, "FooBot", "http://foo.bar/filename.php5", false, ""},
	{"Doc/*.php$", phpEnd, "FooBot", "http://foo.bar/php/", false, ""},
	{"Doc/*.php$", phpEnd, "FooBot", "http://foo.bar/filename?php", false, ""},
	{"Doc/*.php$", phpEnd, "FooBot", "http://foo.bar/aaaphpaaa", false, ""},
	{"Doc/*.php$", phpEnd, "FooBot", "http://foo.bar//windows.PHP", false, ""},
	{"Doc/fish*.php", fishPHP, "FooBot", "http://foo.bar/bar", false, ""},
	{"Doc/fish*.php", fishPHP, "FooBot", "http://foo.bar/fish.php", true, ""},
	{"Doc/fish*.php", fishPHP, "FooBot", "http://foo.bar/fishheads/catfish.php?parameters", true, ""},
	{"Doc/fish*.php", fishPHP, "FooBot", "http://foo.bar/Fish.PHP", false, ""},
	{"Doc/precedence", "user-agent: FooBot\nallow: /p\ndisallow: /\n", "FooBot", "http://example.com/page", true, ""},
	{"Doc/precedence", "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", "FooBot", "http://example.com/folder/page", true, ""},
	{"Doc/precedence", "user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", "FooBot", "http://example.com/page.htm", false, ""},
	{"Doc/precedence", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "http://example.com/", true, ""},
	{"Doc/precedence", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "http://example.com/page.html", false, ""},
	// ID_LinesNumbersAreCountedCorrectly and ID_UTF8ByteOrderMarkIsSkipped,
	// read as their effect on matching: every line ending, no final line
	// end, a BOM (whole or partial) before the first line.
	{"LineEndings", "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /", "bar", "http://foo.bar/x", false, ""},
	{"LineEndings", "User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n", "bar", "http://foo.bar/x", false, ""},
	{"LineEndings", "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r", "bar", "http://foo.bar/x", false, ""},
	{"LineEndings", "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /", "bar", "http://foo.bar/x", false, ""},
	{"BOM", "\xEF\xBB\xBFUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "http://foo.bar/AnyValue", false, ""},
	{"BOM", "\xEF\xBBUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "http://foo.bar/AnyValue", false,
		"Google skips a partial BOM; Trawler skips only the whole one, so the first line is unreadable and its rules are outside any group"},
	{"BOM", "\xEFUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "http://foo.bar/AnyValue", false,
		"as above, for one byte of a BOM"},
	{"BOM", "\xEF\x11\xBFUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "http://foo.bar/AnyValue", true, ""},
	{"BOM", "User-Agent: foo\n\xEF\xBB\xBFDisallow: /AnyValue\n", "foo", "http://foo.bar/AnyValue", true, ""},
}

// rawPathQuery is the path, parameters and query of url as Google's
// GetPathParamsQuery cuts them out: after the authority, up to a
// fragment, "/" when empty; nothing is re-encoded.
func rawPathQuery(url string) string {
	s := url
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	} else {
		s = strings.TrimPrefix(s, "//")
	}
	if i := strings.IndexAny(s, "/?"); i >= 0 {
		s = s[i:]
	} else {
		s = ""
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if s == "" || s[0] == '?' {
		s = "/" + s
	}
	return s
}

func TestGoogleRobotsCases(t *testing.T) {
	var differ []string
	for i, c := range googleCases {
		want := c.google
		if c.differs != "" {
			want = !c.google
			differ = append(differ, c.test+": "+c.differs)
		}
		if got := Parse(200, []byte(c.robots)).Allowed(c.agent, rawPathQuery(c.url)); got != want {
			t.Errorf("case %d (%s): agent %q url %q: allowed %v, want %v (Google: %v)\n%s", i, c.test, c.agent, c.url, got, want, c.google, c.robots)
		}
	}
	t.Logf("%d of Google's expectations; Trawler answers %d differently on purpose", len(googleCases), len(differ))
}

// Google's line cut (2083*8 bytes): a rule longer than that still
// matches as its cut-off prefix there. Trawler keeps rules whole up to
// its own bound, so the cut-off prefix does not match: a documented
// difference, checked here so it stays as documented.
func TestGoogleLongLines(t *testing.T) {
	const maxLine = 2083 * 8
	long := "/x/" + strings.Repeat("a", maxLine-len("/x/")-len("disallow: ")+1)
	r := Parse(200, []byte("user-agent: FooBot\ndisallow: "+long+"/qux\n"))
	if !r.Allowed("FooBot", "/fux") {
		t.Error("a rule matching nothing disallowed /fux")
	}
	// Google: false (the rule cut to `long` matches); Trawler: the whole
	// rule `long/qux` does not match `long/fux`.
	if !r.Allowed("FooBot", long+"/fux") {
		t.Error("the long rule was cut: it matched a path it does not cover")
	}
	if r.Allowed("FooBot", long+"/qux") {
		t.Error("the long rule did not match its own path")
	}
}

func TestRawPathQuery(t *testing.T) {
	// Google's TestGetPathParamsQuery, for the absolute and scheme-less
	// forms the matcher sees.
	for in, want := range map[string]string{
		"": "/", "http://www.example.com": "/", "http://www.example.com/": "/", "http://www.example.com/a": "/a",
		"http://www.example.com/a/": "/a/", "http://www.example.com/a/b?c=http://d.e/": "/a/b?c=http://d.e/",
		"http://www.example.com/a/b?c=d&e=f#fragment": "/a/b?c=d&e=f", "example.com?a": "/?a",
		"example.com/a;b#c": "/a;b", "//a/b/c": "/b/c",
	} {
		if got := rawPathQuery(in); got != want {
			t.Errorf("rawPathQuery(%q) = %q, want %q", in, got, want)
		}
	}
}
