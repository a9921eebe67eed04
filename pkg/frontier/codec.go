package frontier

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// A queued URI is stored compactly, because the frontier holds millions of
// them: an item is "<uk> <seq> <level> <retries> <ctx> <payload>", where uk
// is the hash of the URI's seen key, seq its arrival number, ctx the id of
// a shared context blob and payload the per-URI fields joined by fieldSep.
// Everything a URI shares with its siblings (heritable data, headers,
// sheets) lives once in the context blob.

// fieldSep separates payload fields; it cannot occur in a parsed URL.
const fieldSep = "\x1f"

// URL forms in a payload: relative to the queue's authority over http or
// https, or absolute.
const (
	formHTTP  = 'h'
	formHTTPS = 's'
	formAbs   = 'u'
)

// Payload flag bits.
const (
	flagSeed  = 1
	flagForce = 2
)

// hashID is a short stable id of s: 64-bit FNV-1a in unpadded base64url
// (11 characters, no spaces, safe in keys and items).
func hashID(s string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], h.Sum64())
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// uriKey is a URI's uk, its id in the URI index and its items: the
// 64-bit FNV-1a of its seen key, mixed by MurmurHash3's finaliser, in
// unpadded base64url. The index picks a URI's bucket from the uk's first
// characters (lib.lua), and FNV-1a's top bits hardly change between keys
// that differ in their last bytes (p1, p2, ...): unmixed, 3,000 such URIs
// fell into 16 of 75 buckets. The finaliser is a bijection, so uks collide
// exactly when the FNV hashes do.
func uriKey(seenKey string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seenKey))
	k := h.Sum64()
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], k)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ctxBlob is the part of a launch message that URIs of one launch share.
type ctxBlob struct {
	Method          string                     `json:"m,omitempty"`
	HeritableData   messages.HeritableData     `json:"d"`
	Headers         map[string]string          `json:"h,omitempty"`
	Sheets          []string                   `json:"s,omitempty"`
	TargetSheet     map[string]json.RawMessage `json:"t,omitempty"`
	RecrawlInterval *int64                     `json:"r,omitempty"`
}

// encodeCtx returns the context id and blob of a launch: the source-tag id
// (for quota counters), a newline, then the JSON.
func encodeCtx(l messages.Launch) (id, blob string, err error) {
	b, err := json.Marshal(ctxBlob{
		Method: l.Method, HeritableData: l.ParentURLMetadata.HeritableData, Headers: l.Headers,
		Sheets: l.Sheets, TargetSheet: l.TargetSheet, RecrawlInterval: l.RecrawlInterval,
	})
	if err != nil {
		return "", "", fmt.Errorf("encode launch context: %w", err)
	}
	blob = sourceID(l.Source()) + "\n" + string(b)
	return hashID(blob), blob, nil
}

// ctxMemo remembers the last context encoded in one admission batch: the
// outlinks of a page, which come together, share their context.
type ctxMemo struct {
	last     *messages.Launch
	id, blob string
}

func (m *ctxMemo) encode(l *messages.Launch) (id, blob string, err error) {
	if m.last != nil && sameCtx(m.last, l) {
		return m.id, m.blob, nil
	}
	if m.id, m.blob, err = encodeCtx(*l); err != nil {
		m.last = nil
		return "", "", err
	}
	m.last = l
	return m.id, m.blob, nil
}

// sameCtx reports whether a and b encode to the same context: every field
// encodeCtx reads is equal (HeritableData writes a nil list and an empty
// one differently; ctxBlob omits empty maps and lists).
func sameCtx(a, b *messages.Launch) bool {
	ha, hb := &a.ParentURLMetadata.HeritableData, &b.ParentURLMetadata.HeritableData
	return a.Method == b.Method && maps.Equal(a.Headers, b.Headers) && slices.Equal(a.Sheets, b.Sheets) &&
		maps.EqualFunc(a.TargetSheet, b.TargetSheet, sameRaw) && samePtr(a.RecrawlInterval, b.RecrawlInterval) &&
		ha.Source == hb.Source && slices.Equal(ha.Heritable, hb.Heritable) && samePtr(ha.RefreshDepth, hb.RefreshDepth) &&
		ha.LaunchTimestamp == hb.LaunchTimestamp && slices.Equal(ha.Annotations, hb.Annotations) &&
		maps.EqualFunc(ha.Extra, hb.Extra, sameRaw) &&
		(ha.Heritable == nil) == (hb.Heritable == nil) && (ha.Annotations == nil) == (hb.Annotations == nil)
}

func sameRaw(a, b json.RawMessage) bool { return bytes.Equal(a, b) }

func samePtr[T comparable](a, b *T) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}

// sourceID is the id of a source tag in quota keys; "" for none.
func sourceID(source string) string {
	if source == "" {
		return ""
	}
	return hashID(source)
}

func parseCtx(blob string) (*ctxBlob, error) {
	_, js, ok := strings.Cut(blob, "\n")
	if !ok {
		return nil, errors.New("launch context: missing source line")
	}
	var c ctxBlob
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		return nil, fmt.Errorf("launch context: %w", err)
	}
	return &c, nil
}

// apply sets the launch's shared fields from c. The launch gets copies of
// c's maps and slices, so that launches decoded from one parsed context
// share nothing that one of them could change.
func (c *ctxBlob) apply(l *messages.Launch) {
	h := c.HeritableData
	h.Heritable, h.Annotations = slices.Clone(h.Heritable), slices.Clone(h.Annotations)
	h.Extra, h.RefreshDepth = maps.Clone(h.Extra), clonePtr(h.RefreshDepth)
	l.Method, l.ParentURLMetadata.HeritableData = c.Method, h
	l.Headers, l.Sheets, l.TargetSheet = maps.Clone(c.Headers), slices.Clone(c.Sheets), maps.Clone(c.TargetSheet)
	l.RecrawlInterval = clonePtr(c.RecrawlInterval)
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// ctxCache parses each context blob of one claim reply once: the URIs of
// a launch share one.
type ctxCache map[string]*ctxBlob

func (cc ctxCache) decode(blob string, l *messages.Launch) error {
	c, ok := cc[blob]
	if !ok {
		var err error
		if c, err = parseCtx(blob); err != nil {
			return err
		}
		cc[blob] = c
	}
	c.apply(l)
	return nil
}

// encodePayload packs the per-URI fields of l, queued under host.
func encodePayload(l messages.Launch, host string) (string, error) {
	fields := []string{l.URL, l.ParentURL, l.ParentURLMetadata.PathFromSeed, l.Hop}
	for i, f := range fields {
		if strings.Contains(f, fieldSep) {
			return "", fmt.Errorf("field %d of %q contains a control character (0x1f)", i, l.URL)
		}
	}
	flags := 0
	if l.IsSeed {
		flags |= flagSeed
	}
	if l.ForceFetch {
		flags |= flagForce
	}
	return strconv.Itoa(flags) + fieldSep + packURL(l.URL, host) + fieldSep + packURL(l.ParentURL, host) +
		fieldSep + l.ParentURLMetadata.PathFromSeed + fieldSep + l.Hop, nil
}

func decodePayload(p, host string, l *messages.Launch) error {
	f := strings.Split(p, fieldSep)
	if len(f) != 5 {
		return fmt.Errorf("payload has %d fields, want 5", len(f))
	}
	flags, err := strconv.Atoi(f[0])
	if err != nil {
		return fmt.Errorf("payload flags %q: %w", f[0], err)
	}
	if l.URL, err = unpackURL(f[1], host); err != nil {
		return fmt.Errorf("payload url: %w", err)
	}
	if l.URL == "" {
		return errors.New("payload url: empty")
	}
	if l.ParentURL, err = unpackURL(f[2], host); err != nil {
		return fmt.Errorf("payload via: %w", err)
	}
	l.IsSeed, l.ForceFetch = flags&flagSeed != 0, flags&flagForce != 0
	l.ParentURLMetadata.PathFromSeed, l.Hop = f[3], f[4]
	return nil
}

// packURL drops the scheme and authority when they are the queue's own.
func packURL(u, host string) string {
	if u == "" {
		return ""
	}
	for _, s := range []struct {
		prefix string
		form   byte
	}{{"http://", formHTTP}, {"https://", formHTTPS}} {
		if rest, ok := strings.CutPrefix(u, s.prefix+host); ok && (rest == "" || rest[0] == '/' || rest[0] == '?' || rest[0] == '#') {
			return string(s.form) + rest
		}
	}
	return string(formAbs) + u
}

func unpackURL(s, host string) (string, error) {
	if s == "" {
		return "", nil
	}
	switch s[0] {
	case formHTTP:
		return "http://" + host + s[1:], nil
	case formHTTPS:
		return "https://" + host + s[1:], nil
	case formAbs:
		return s[1:], nil
	}
	return "", fmt.Errorf("unknown URL form %q", s[0])
}

// item is a queue item's header, as the scripts write it.
type item struct {
	uk          string
	seq         string
	level       int
	retries     int
	interrupted bool // returned uncharged after an interrupted claim
	ctx         string
	payload     string
}

func parseItem(s string) (item, error) {
	f := strings.SplitN(s, " ", 6)
	if len(f) != 6 {
		return item{}, fmt.Errorf("queue item %.40q: %d header fields, want 6", s, len(f))
	}
	_, err0 := strconv.ParseUint(f[1], 10, 64)
	lvl, err1 := strconv.Atoi(f[2])
	rs, intr := strings.CutSuffix(f[3], "i")
	r, err2 := strconv.Atoi(rs)
	if err := errors.Join(err0, err1, err2); err != nil {
		return item{}, fmt.Errorf("queue item %.40q: %w", s, err)
	}
	return item{uk: f[0], seq: f[1], level: lvl, retries: r, interrupted: intr, ctx: f[4], payload: f[5]}, nil
}
