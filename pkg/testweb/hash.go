package testweb

import (
	"hash/fnv"
	"math/rand/v2"
	"strings"
)

// Salts keep the independent per-resource decisions uncorrelated: each
// decision hashes the same coordinates with its own salt.
const (
	saltDeep uint64 = iota + 1
	saltCross
	saltCrossForm
	saltCrossHost
	saltImages
	saltSrcset
	saltBase
	saltMissing
	saltVolatile
	saltChunked
	saltSpecial
	saltText
	saltForm
	saltQuery
	saltLarge
	saltImage
	saltTrapHost
	saltHostileHost
	saltRedirect
	saltLastMod
	saltETag
	saltFont
)

// mix is the splitmix64 finaliser: a cheap, well-distributed 64-bit mixer.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// hashOf folds the site seed and the given coordinates into one value. Every
// generator decision goes through it, so the site is a pure function of the
// seed and nothing has to be stored per page.
func (s *Site) hashOf(parts ...uint64) uint64 {
	h := mix(uint64(s.cfg.Seed))
	for _, p := range parts {
		h = mix(h ^ p)
	}
	return h
}

// pathKey turns a URL path into a number usable as a hash coordinate.
func pathKey(p string) uint64 {
	f := fnv.New64a()
	_, _ = f.Write([]byte(p))
	return f.Sum64()
}

// rngFor returns a private random stream for one resource, so rendering
// pages in any order gives the same bytes.
func (s *Site) rngFor(parts ...uint64) *rand.Rand {
	h := s.hashOf(parts...)
	return rand.New(rand.NewPCG(h, mix(h)))
}

// words is the vocabulary of page text. None of them looks like a URL, a
// file name or a domain, so no extractor finds links in the prose.
var words = [...]string{
	"harbour", "lantern", "meadow", "copper", "willow", "granite", "ferry",
	"orchard", "beacon", "thistle", "quarry", "saddle", "marble", "estuary",
	"bramble", "cobble", "tide", "heron", "kettle", "ledger", "mill", "north",
	"parish", "quill", "river", "slate", "tower", "umber", "valley", "weir",
	"yarrow", "zephyr", "archive", "borough", "chapel", "dune", "ember",
	"fold", "glen", "hamlet", "inlet", "jetty", "keep", "loch", "moor",
	"nook", "oak", "pier", "quay", "ridge", "shore", "thatch", "upland",
	"vale", "wharf", "yard", "a", "the", "of", "and", "in", "by", "near",
}

// title returns a short deterministic title of two or three words.
func title(r *rand.Rand) string {
	n := 2 + r.IntN(2)
	var b strings.Builder
	b.Grow(n * 8) // words are at most 7 bytes: one allocation per title
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		w := words[r.IntN(len(words)-7)] // skip the short function words
		b.WriteString(upperFirst(w))
		b.WriteString(w[1:])
	}
	return b.String()
}
