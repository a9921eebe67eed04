package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
)

// ErrMissingURL reports a launch message without its required url field.
var ErrMissingURL = errors.New(`missing required field "url"`)

// DecodeLaunch parses one launch message. Unknown fields are ignored (unknown
// heritableData keys are kept in HeritableData.Extra); the message must have
// a url, and hop must be empty or one hop letter. Empty headers, sheets and
// targetSheet decode as nil (Launch.MarshalJSON writes {} and [] for the
// first two and omits the third).
func DecodeLaunch(b []byte) (Launch, error) {
	l, ok := fastDecodeLaunch(b)
	if !ok {
		l = Launch{}
		if err := decodeStrict(b, &l); err != nil {
			return Launch{}, fmt.Errorf("decode launch message: %w", err)
		}
	}
	if err := l.Validate(); err != nil {
		return Launch{}, fmt.Errorf("decode launch message: %w", err)
	}
	// Empty collections mean the same as absent ones; keeping them nil makes
	// decode-encode-decode stable.
	if len(l.Headers) == 0 {
		l.Headers = nil
	}
	if len(l.Sheets) == 0 {
		l.Sheets = nil
	}
	if len(l.TargetSheet) == 0 {
		l.TargetSheet = nil
	}
	return l, nil
}

// MarshalJSON encodes the message with "headers" and "sheets" always
// present, {} and [] when empty, the shape UKWA's consumers are used to.
func (l Launch) MarshalJSON() ([]byte, error) {
	if b, err := appendLaunch(make([]byte, 0, launchSizeHint), l, false); err == nil {
		return b, nil
	}
	return l.marshalSlow()
}

// marshalSlow is MarshalJSON through encoding/json; the fast encoder falls
// back to it so a bad raw value is reported in encoding/json's words.
func (l Launch) marshalSlow() ([]byte, error) {
	type plain Launch // no methods: avoids recursing into MarshalJSON
	p := plain(l)
	if p.Headers == nil {
		p.Headers = map[string]string{}
	}
	if p.Sheets == nil {
		p.Sheets = []string{}
	}
	return marshal(p)
}

// Validate checks what a consumer cannot do without: a url and a known hop
// letter. Producers call it before publishing.
func (l Launch) Validate() error {
	if strings.TrimSpace(l.URL) == "" {
		return ErrMissingURL
	}
	if l.Hop != "" && !IsHop(l.Hop) {
		return fmt.Errorf("hop %q is not a hop letter (one of %s)", l.Hop, hopLetters)
	}
	return nil
}

// HopPath is the hop path of the launched URI: the parent's path from seed
// followed by the hop that led here ("" for a seed).
func (l Launch) HopPath() string {
	return l.ParentURLMetadata.PathFromSeed + l.Hop
}

// Source is the source tag (seed/target) the URI inherits, e.g.
// "tid:57875:https://example.org/".
func (l Launch) Source() string {
	return l.ParentURLMetadata.HeritableData.Source
}

// IsGET reports whether the message asks for a GET, the only method crawled;
// no method means GET.
func (l Launch) IsGET() bool {
	return l.Method == "" || strings.EqualFold(l.Method, "GET")
}

// ParentOrSelf is the via URL: parentUrl, or url itself when parentUrl is
// empty (a seed is its own parent).
func (l Launch) ParentOrSelf() string {
	if l.ParentURL == "" {
		return l.URL
	}
	return l.ParentURL
}

// droppedHeader reports the request headers a launch message may carry but
// the fetcher must set itself: the connection and encoding are the
// recorder's business, and the host comes from the URL.
func droppedHeader(name string) bool {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "host", "connection", "accept-encoding", "upgrade-insecure-requests":
		return true
	}
	return false
}

// RequestHeaders returns the extra request headers to send, without HTTP/2
// pseudo-headers (":authority") and without host, connection,
// accept-encoding and upgrade-insecure-requests (compared case-insensitively).
// Names keep the case the producer used. It returns nil when none are left.
func (l Launch) RequestHeaders() map[string]string {
	var out map[string]string
	for k, v := range l.Headers {
		if strings.HasPrefix(strings.TrimSpace(k), ":") || droppedHeader(k) {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(l.Headers))
		}
		out[k] = v
	}
	return out
}

// Time parses the message timestamp (ISO-8601; a fraction of any length; no
// zone means UTC). It returns the zero time and no error when the message has
// no timestamp.
func (l Launch) Time() (time.Time, error) {
	if l.Timestamp == "" {
		return time.Time{}, nil
	}
	t, err := ParseISOTime(l.Timestamp)
	if err != nil {
		return time.Time{}, fmt.Errorf("launch timestamp: %w", err)
	}
	return t, nil
}

// Annotations are the annotations the URI inherits (e.g. "resetQuotas",
// "launchTimestamp:20240117090000", "WebRenderThis").
func (l Launch) Annotations() []string {
	return l.ParentURLMetadata.HeritableData.Annotations
}

// LaunchTimestamp is the 14-digit launch time the URI inherits: the
// heritableData launchTimestamp, else a "launchTimestamp:" annotation, else
// the legacy launch_ts key; "" when there is none.
func (l Launch) LaunchTimestamp() string {
	hd := l.ParentURLMetadata.HeritableData
	if hd.LaunchTimestamp != "" {
		return hd.LaunchTimestamp
	}
	for _, a := range hd.Annotations {
		if ts, ok := strings.CutPrefix(a, "launchTimestamp:"); ok && ts != "" {
			return ts
		}
	}
	var legacy string
	if raw, ok := hd.Extra["launch_ts"]; ok && json.Unmarshal(raw, &legacy) == nil {
		return legacy
	}
	return ""
}

// LaunchTime is LaunchTimestamp parsed as UTC; ok is false when there is no
// launch timestamp or it is not 14 digits.
func (l Launch) LaunchTime() (t time.Time, ok bool) {
	ts := l.LaunchTimestamp()
	if ts == "" {
		return time.Time{}, false
	}
	t, err := ParseTimestamp14(ts)
	return t, err == nil
}

// known heritableData keys, decoded into HeritableData's fields.
const (
	hdSource          = "source"
	hdHeritable       = "heritable"
	hdRefreshDepth    = "refreshDepth"
	hdLaunchTimestamp = "launchTimestamp"
	hdAnnotations     = "annotations"
)

// UnmarshalJSON decodes the known keys into fields and keeps the others in
// Extra, so re-encoding loses nothing.
func (h *HeritableData) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*h = HeritableData{}
		return nil
	}
	// Errors are formatted with %v, not wrapped: the offsets inside them are
	// relative to this object, not to the message, so they must not reach
	// describeJSONError's position reporting.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("heritableData: want a JSON object: %v", err)
	}
	out := HeritableData{}
	fields := []struct {
		key string
		dst any
	}{
		{hdSource, &out.Source},
		{hdHeritable, &out.Heritable},
		{hdRefreshDepth, &out.RefreshDepth},
		{hdLaunchTimestamp, &out.LaunchTimestamp},
		{hdAnnotations, &out.Annotations},
	}
	for _, f := range fields {
		v, ok := raw[f.key]
		if !ok {
			continue
		}
		delete(raw, f.key)
		if err := json.Unmarshal(v, f.dst); err != nil {
			return fmt.Errorf("heritableData.%s: wrong type: %v", f.key, err)
		}
	}
	if len(raw) > 0 {
		out.Extra = raw
	}
	*h = out
	return nil
}

// MarshalJSON encodes the known fields (omitting empty ones) together with
// the Extra keys; a known field wins over an Extra key of the same name.
func (h HeritableData) MarshalJSON() ([]byte, error) {
	if b, err := appendHeritable(nil, h, false); err == nil {
		return b, nil
	}
	return h.marshalSlow()
}

// marshalSlow is MarshalJSON through encoding/json; the fast encoder falls
// back to it so a bad raw value is reported in encoding/json's words.
func (h HeritableData) marshalSlow() ([]byte, error) {
	m := make(map[string]any, len(h.Extra)+5)
	for k, v := range h.Extra {
		m[k] = v
	}
	delete(m, hdSource)
	delete(m, hdHeritable)
	delete(m, hdRefreshDepth)
	delete(m, hdLaunchTimestamp)
	delete(m, hdAnnotations)
	if h.Source != "" {
		m[hdSource] = h.Source
	}
	if h.Heritable != nil {
		m[hdHeritable] = h.Heritable
	}
	if h.RefreshDepth != nil {
		m[hdRefreshDepth] = *h.RefreshDepth
	}
	if h.LaunchTimestamp != "" {
		m[hdLaunchTimestamp] = h.LaunchTimestamp
	}
	if h.Annotations != nil {
		m[hdAnnotations] = h.Annotations
	}
	return marshal(m)
}

// Clone returns a deep copy, so a child's heritable data can be changed
// without touching the parent's.
func (h HeritableData) Clone() HeritableData {
	c := h
	if h.Heritable != nil {
		c.Heritable = append([]string(nil), h.Heritable...)
	}
	if h.Annotations != nil {
		c.Annotations = append([]string(nil), h.Annotations...)
	}
	if h.RefreshDepth != nil {
		d := *h.RefreshDepth
		c.RefreshDepth = &d
	}
	if h.Extra != nil {
		c.Extra = maps.Clone(h.Extra)
	}
	return c
}
