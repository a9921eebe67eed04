package sheets

import (
	"fmt"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

// entry is a sheet of the catalog with what Explain reports about it,
// worked out once rather than per prefix.
type entry struct {
	sheet   profile.Sheet
	ignored []string // settings with no effect, as "key: why"
}

func newEntry(sh profile.Sheet) *entry {
	return &entry{sheet: sh, ignored: ignoredSettings(sh.Settings)}
}

// ref is one sheet attached at a prefix.
type ref struct {
	name   string
	sheet  *entry // nil when no sheet of that name exists
	origin string
	key    string // part of the cache key: the name, or an inline sheet's content
}

// binding is the sheets attached at one prefix, in order.
type binding struct {
	prefix string
	refs   []ref
}

// snapshot is one immutable view of all associations.
type snapshot struct {
	root    *tnode
	version int64            // Redis version it was loaded at
	launch  map[string][]ref // launch-attached refs by prefix
	count   int              // bound prefixes
}

// profileBindings normalises the profile's associations; several
// associations for one prefix concatenate in file order.
func profileBindings(assocs []profile.Association, catalog map[string]*entry) ([]binding, error) {
	var out []binding
	index := map[string]int{}
	for _, a := range assocs {
		for _, raw := range a.SurtPrefixes {
			p, err := Prefix(raw)
			if err != nil {
				return nil, fmt.Errorf("sheets.associations: line %d: %w", a.Line, err)
			}
			i, ok := index[p]
			if !ok {
				i = len(out)
				index[p] = i
				out = append(out, binding{prefix: p})
			}
			for _, name := range a.Sheets {
				out[i].refs = append(out[i].refs, namedRef(name, OriginProfile, catalog))
			}
		}
	}
	return out, nil
}

func namedRef(name, origin string, catalog map[string]*entry) ref {
	return ref{name: name, origin: origin, key: name, sheet: catalog[name]}
}

// cached is one combination of sheets: its settings, or why the last
// sheet of it could not apply.
type cached struct {
	eff *Effective
	err error
}

// rebuild makes and publishes a snapshot of the profile's associations and
// the given launch-attached ones. Callers hold s.mu.
func (s *Sheets) rebuild(launch map[string][]ref, version int64) {
	root := &tnode{}
	for _, b := range s.profile {
		n := root.insert(b.prefix)
		n.bind = &binding{prefix: b.prefix, refs: append([]ref(nil), b.refs...)}
	}
	for p, refs := range launch {
		n := root.insert(p)
		if n.bind == nil {
			n.bind = &binding{prefix: p}
		}
		n.bind.refs = append(n.bind.refs, refs...)
	}
	next := map[string]cached{}
	count := s.resolve(root, s.base, next)
	s.cache = next
	s.snap.Store(&snapshot{root: root, version: version, launch: launch, count: count})
}

// resolve fills eff and applied of every bound node under n, given the
// effective settings above it, recording the combinations in use in next.
// It returns the number of bound nodes.
func (s *Sheets) resolve(n *tnode, above *Effective, next map[string]cached) int {
	count := 0
	if n.bind != nil {
		n.eff, n.applied = s.applyBinding(above, n.bind, next)
		above = n.eff
		count++
	}
	for _, c := range n.children {
		count += s.resolve(c, above, next)
	}
	return count
}

// applyBinding applies a prefix's sheets on top of the settings above it,
// one sheet at a time so that a sheet that would make the settings invalid
// is skipped (and reported) without losing the others. Combinations come
// from the previous snapshot's cache when they can; only new ones are
// computed and logged.
func (s *Sheets) applyBinding(above *Effective, b *binding, next map[string]cached) (*Effective, []Applied) {
	eff := above
	applied := make([]Applied, 0, len(b.refs))
	for _, r := range b.refs {
		a := Applied{Prefix: b.prefix, Sheet: r.name, Origin: r.origin}
		if r.sheet == nil {
			a.Skipped = "no sheet of that name"
			applied = append(applied, a)
			continue
		}
		a.Ignored = r.sheet.ignored
		key := eff.key + "|" + r.key
		c, ok := next[key]
		if !ok {
			if c, ok = s.cache[key]; !ok {
				c.eff, c.err = s.applySheet(eff, r, key)
				if c.err != nil {
					s.log.Warn("sheet skipped: the settings it leads to are invalid",
						"prefix", b.prefix, "sheet", r.name, "origin", r.origin, "err", c.err)
				}
			}
			next[key] = c
		}
		if c.err != nil {
			a.Skipped = c.err.Error()
		} else {
			eff = c.eff
		}
		applied = append(applied, a)
	}
	return eff, applied
}

func (s *Sheets) applySheet(above *Effective, r ref, key string) (*Effective, error) {
	p, err := above.Profile.WithSettings(r.sheet.sheet.Settings)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(above.Sheets), len(above.Sheets)+1)
	copy(names, above.Sheets)
	return &Effective{Profile: p, Sheets: append(names, r.name), key: key}, nil
}

// ignoredSettings lists the settings of a sheet that have no effect.
func ignoredSettings(settings []profile.Setting) []string {
	var out []string
	for _, st := range settings {
		if r, err := st.Resolve(); err == nil && r.Key == "" {
			out = append(out, st.Key+": "+r.Note)
		}
	}
	return out
}

// inlineRef makes a ref for a launch message's targetSheet. Its cache key
// is its content, so identical targetSheets share effective settings.
func inlineRef(settings []profile.Setting, canonical string) ref {
	sh := profile.Sheet{Name: TargetSheetName, Origin: OriginLaunch, Settings: settings}
	return ref{name: TargetSheetName, sheet: newEntry(sh), origin: OriginLaunch,
		key: TargetSheetName + "{" + strings.TrimSpace(canonical) + "}"}
}
