package sheets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// Redis layout, under Options.KeyPrefix (which carries the hash tag, so
// both keys live in one slot and change in one MULTI):
//
//	<prefix>sheets:assoc    hash: SURT prefix -> stored (JSON)
//	<prefix>sheets:version  counter, incremented on every change
const (
	assocKey   = "sheets:assoc"
	versionKey = "sheets:version"
)

// stored is one launch-attached association as kept in Redis. It holds
// nothing that varies between launches of the same target, so a relaunch
// with the same sheets is recognised and costs no write.
type stored struct {
	Sheets      []string                   `json:"sheets,omitempty"`
	TargetSheet map[string]json.RawMessage `json:"targetSheet,omitempty"`
}

// Dropped is what a launch asked for that could not be attached.
type Dropped struct {
	// Sheets are names with no sheet in the catalog.
	Sheets []string
	// Settings are targetSheet keys that are unknown or whose value does
	// not fit, each as "key: reason".
	Settings []string
}

// Empty reports that nothing was dropped.
func (d Dropped) Empty() bool { return len(d.Sheets) == 0 && len(d.Settings) == 0 }

// ErrNoRedis is returned by the methods that attach sheets when Sheets was
// built without Redis.
var ErrNoRedis = errors.New("sheets: no Redis configured for launch-attached sheets")

// AttachLaunch attaches a launch message's sheets and targetSheet to the
// URL's implied SURT prefix (the scope a seed opens). A message with
// neither changes nothing. Unknown sheet names and targetSheet keys are
// logged and dropped, and returned so the caller can count them.
func (s *Sheets) AttachLaunch(ctx context.Context, l messages.Launch) (Dropped, error) {
	return s.attachLaunch(ctx, l, false)
}

// AttachLaunchIfUnset is AttachLaunch for sheets that stand in for
// another URL's: they are attached only where no launch attached any, so
// a seed that redirects to a site launched with sheets of its own (an
// operator's noLimit or recrawl sheet) does not replace them.
func (s *Sheets) AttachLaunchIfUnset(ctx context.Context, l messages.Launch) (Dropped, error) {
	return s.attachLaunch(ctx, l, true)
}

func (s *Sheets) attachLaunch(ctx context.Context, l messages.Launch, ifUnset bool) (Dropped, error) {
	if len(l.Sheets) == 0 && len(l.TargetSheet) == 0 {
		return Dropped{}, nil
	}
	p := surt.ImpliedPrefix(l.URL)
	if !strings.HasPrefix(p, "http://(") {
		return Dropped{}, fmt.Errorf("attach sheets for %q: not an http(s) URL", l.URL)
	}
	d, err := s.attach(ctx, p, stored{Sheets: l.Sheets, TargetSheet: l.TargetSheet}, ifUnset)
	if err != nil {
		return d, fmt.Errorf("attach sheets for %s: %w", l.URL, err)
	}
	return d, nil
}

// Attach sets the launch-attached sheets of one prefix (normalised with
// Prefix), replacing what was attached there before. Names and targetSheet
// keys that do not exist are dropped, logged and returned.
func (s *Sheets) Attach(ctx context.Context, prefix string, names []string, target map[string]json.RawMessage) (Dropped, error) {
	p, err := Prefix(prefix)
	if err != nil {
		return Dropped{}, fmt.Errorf("attach sheets: %w", err)
	}
	return s.attach(ctx, p, stored{Sheets: names, TargetSheet: target}, false)
}

// attach stores st at p; with ifUnset, only when nothing is stored there.
func (s *Sheets) attach(ctx context.Context, p string, st stored, ifUnset bool) (Dropped, error) {
	if s.opts.Redis == nil {
		return Dropped{}, ErrNoRedis
	}
	st, d := s.filter(st)
	if !d.Empty() {
		s.log.Warn("launch sheets dropped", "prefix", p, "unknownSheets", d.Sheets, "badSettings", d.Settings)
	}
	if len(st.Sheets) == 0 && len(st.TargetSheet) == 0 {
		return d, nil
	}
	b, err := json.Marshal(st) // map keys sorted: equal content, equal bytes
	if err != nil {
		return d, fmt.Errorf("encode sheets of %s: %w", p, err)
	}
	// Relaunches mostly repeat what is stored: skip the write and the
	// reload every worker would do after it.
	if cur, err := s.opts.Redis.HGet(ctx, s.key(assocKey), p).Result(); err == nil && (cur == string(b) || ifUnset) {
		return d, nil
	} else if err != nil && !errors.Is(err, redis.Nil) {
		return d, fmt.Errorf("read sheets of %s: %w", p, err)
	}
	return d, s.write(ctx, p, func(pipe redis.Pipeliner) { pipe.HSet(ctx, s.key(assocKey), p, b) }, string(b))
}

// Detach removes the launch-attached sheets of a prefix (normalised with
// Prefix); the profile's associations stay.
func (s *Sheets) Detach(ctx context.Context, prefix string) error {
	if s.opts.Redis == nil {
		return ErrNoRedis
	}
	p, err := Prefix(prefix)
	if err != nil {
		return fmt.Errorf("detach sheets: %w", err)
	}
	return s.write(ctx, p, func(pipe redis.Pipeliner) { pipe.HDel(ctx, s.key(assocKey), p) }, "")
}

// write changes the association of prefix p (raw is its new stored value,
// "" once deleted) and bumps the version in one MULTI. This process sees
// the change at once: when no other change came between, by updating its
// own copy, else by reloading everything.
func (s *Sheets) write(ctx context.Context, p string, change func(redis.Pipeliner), raw string) error {
	pipe := s.opts.Redis.TxPipeline()
	change(pipe)
	incr := pipe.Incr(ctx, s.key(versionKey))
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("store sheets: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snap.Load()
	if incr.Val() != snap.version+1 {
		return s.load(ctx)
	}
	launch := make(map[string][]ref, len(snap.launch)+1)
	for k, v := range snap.launch {
		launch[k] = v
	}
	delete(launch, p)
	delete(s.parsed, p)
	if raw != "" {
		refs, err := s.parseStored(raw)
		if err != nil {
			return fmt.Errorf("stored sheets of %s: %w", p, err)
		}
		launch[p], s.parsed[p] = refs, storedRefs{raw: raw, refs: refs}
	}
	s.rebuild(launch, incr.Val())
	return nil
}

// filter drops unknown sheet names and targetSheet settings that do not
// resolve or whose values do not fit.
func (s *Sheets) filter(st stored) (stored, Dropped) {
	var d Dropped
	names := make([]string, 0, len(st.Sheets))
	for _, n := range st.Sheets {
		if s.Has(n) {
			names = append(names, n)
		} else {
			d.Sheets = append(d.Sheets, n)
		}
	}
	st.Sheets = names
	var target map[string]json.RawMessage
	for k, raw := range st.TargetSheet {
		set, err := profile.SettingFromJSON(k, raw)
		if err == nil {
			err = set.Check()
		}
		if err != nil {
			d.Settings = append(d.Settings, fmt.Sprintf("%s: %v", k, err))
			continue
		}
		if target == nil {
			target = map[string]json.RawMessage{}
		}
		target[k] = raw
	}
	st.TargetSheet = target
	slices.Sort(d.Settings)
	return st, d
}

// Refresh reloads the launch-attached associations when another worker
// changed them. It reads one counter, and no more often than
// Options.MinRefreshInterval, so it is cheap to call once per batch of URIs.
func (s *Sheets) Refresh(ctx context.Context) error {
	if s.opts.Redis == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	if now.Sub(s.lastCheck) < s.opts.MinRefreshInterval {
		return nil
	}
	v, err := s.version(ctx)
	if err != nil {
		return err
	}
	s.lastCheck = now
	if v == s.snap.Load().version {
		return nil
	}
	return s.load(ctx)
}

// Reload reads every launch-attached association again, whatever the
// version and the refresh interval say: after a frontier rebuild restored
// them into a Redis that had lost them, whose version counter restarted
// and may even equal the one this process last saw.
func (s *Sheets) Reload(ctx context.Context) error {
	if s.opts.Redis == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load(ctx)
}

// Version is the Redis version of the associations in use (0 without Redis
// or before any launch attached sheets).
func (s *Sheets) Version() int64 { return s.snap.Load().version }

func (s *Sheets) version(ctx context.Context) (int64, error) {
	v, err := s.opts.Redis.Get(ctx, s.key(versionKey)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sheets version: %w", err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("sheets version %q: %w", v, err)
	}
	return n, nil
}

// load reads every launch-attached association and rebuilds. The version
// is read first: a change racing with the read is picked up next time.
// Callers hold s.mu.
func (s *Sheets) load(ctx context.Context) error {
	v, err := s.version(ctx)
	if err != nil {
		return err
	}
	all, err := s.opts.Redis.HGetAll(ctx, s.key(assocKey)).Result()
	if err != nil {
		return fmt.Errorf("load sheets: %w", err)
	}
	launch := make(map[string][]ref, len(all))
	parsed := make(map[string]storedRefs, len(all))
	for p, raw := range all {
		if old, ok := s.parsed[p]; ok && old.raw == raw {
			launch[p], parsed[p] = old.refs, old
			continue
		}
		refs, err := s.parseStored(raw)
		if err != nil {
			s.log.Warn("stored sheet association skipped", "prefix", p, "err", err)
			continue
		}
		launch[p], parsed[p] = refs, storedRefs{raw: raw, refs: refs}
	}
	s.parsed = parsed
	s.lastCheck = s.opts.Now()
	s.rebuild(launch, v)
	return nil
}

// storedRefs keeps a parsed Redis entry, so a reload only parses entries
// that changed.
type storedRefs struct {
	raw  string
	refs []ref
}

// parseStored turns a stored association into refs: named sheets in order,
// then the targetSheet with its keys sorted (JSON objects have no order).
func (s *Sheets) parseStored(raw string) ([]ref, error) {
	var st stored
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	refs := make([]ref, 0, len(st.Sheets)+1)
	for _, n := range st.Sheets {
		refs = append(refs, namedRef(n, OriginLaunch, s.catalog))
	}
	if len(st.TargetSheet) == 0 {
		return refs, nil
	}
	keys := make([]string, 0, len(st.TargetSheet))
	for k := range st.TargetSheet {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var settings []profile.Setting
	var canon bytes.Buffer
	for _, k := range keys {
		set, err := profile.SettingFromJSON(k, st.TargetSheet[k])
		if err != nil {
			return nil, err
		}
		settings = append(settings, set)
		fmt.Fprintf(&canon, "%q:", k)
		if err := json.Compact(&canon, st.TargetSheet[k]); err != nil {
			return nil, fmt.Errorf("targetSheet %s: %w", k, err)
		}
		canon.WriteByte(',')
	}
	return append(refs, inlineRef(settings, canon.String())), nil
}

func (s *Sheets) key(name string) string { return s.opts.KeyPrefix + name }
