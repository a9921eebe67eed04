package testweb

import (
	"fmt"
)

// fanout is the number of tree children of each numbered page.
const fanout = 4

// imgRef is one <img>: its src and optional srcset candidates.
type imgRef struct {
	src    ref
	srcset []srcsetItem
}

// srcsetItem is one srcset candidate and its descriptor ("2x", "800w").
type srcsetItem struct {
	ref  ref
	desc string
}

// htmlDoc is the structure of an HTML document. The renderer writes it and
// the reachability oracle walks it, so both always agree.
type htmlDoc struct {
	res      resource
	base     string // base href path ("" for none), ends in '/'
	baseForm form   // formRoot or formAbsolute
	styles   []ref
	scripts  []ref
	images   []imgRef
	links    []ref
	toTop    bool // add an in-page "#top" link (only without <base>)
}

// baseDir is the directory relative references resolve against.
func (d *htmlDoc) baseDir() string {
	if d.base != "" {
		return d.base
	}
	return dirOf(d.res.path)
}

// refs lists every outgoing reference of the document.
func (d *htmlDoc) refs() []ref {
	out := make([]ref, 0, 1+len(d.styles)+len(d.scripts)+2*len(d.images)+len(d.links))
	if d.base != "" {
		// Heritrix's ExtractorHTML treats <base href> as a link too, so a
		// crawler fetches it.
		out = append(out, ref{target{d.res.host, d.base}, d.baseForm})
	}
	out = append(out, d.styles...)
	out = append(out, d.scripts...)
	for _, img := range d.images {
		out = append(out, img.src)
		for _, c := range img.srcset {
			out = append(out, c.ref)
		}
	}
	return append(out, d.links...)
}

// doc returns the HTML structure of r, which must satisfy r.isHTML().
func (s *Site) doc(r resource) htmlDoc {
	switch r.kind {
	case kindPage:
		return s.pageDoc(r.host, r.idx)
	case kindCalendar:
		return s.calendarDoc(r)
	default:
		return s.miscDoc(r)
	}
}

// pickForm chooses a same-host reference form from a hash.
func pickForm(h uint64) form { return form(h % uint64(numForms)) }

// pageDoc builds numbered page idx of host h: tree links to its parent and
// children, cross links, sometimes a <base href>, a link to another host,
// a 404, a query variant, an off-site name, and any special links assigned
// to it.
func (s *Site) pageDoc(h, idx int) htmlDoc {
	path := s.pagePath(h, idx)
	hv := func(salt uint64, extra ...uint64) uint64 {
		// Folding extra on top is hashOf(h, idx, salt, extra...) without
		// building that slice on every one of a page's many decisions.
		v := s.hashOf(uint64(h), uint64(idx), salt)
		for _, e := range extra {
			v = mix(v ^ e)
		}
		return v
	}
	d := htmlDoc{res: resource{kind: kindPage, host: h, path: path, idx: idx}}
	if idx > 0 && hv(saltBase)%7 == 0 {
		d.base = dirOf(s.pagePath(h, int(hv(saltBase, 1)%uint64(s.linked))))
		d.baseForm = []form{formRoot, formAbsolute}[hv(saltBase, 2)%2]
	}
	d.toTop = d.base == ""
	d.styles = []ref{{target{h, pathCSSSite}, pickForm(hv(saltForm, 1))}}
	d.scripts = []ref{{target{h, pathJS}, pickForm(hv(saltForm, 2))}}
	for i := range 1 + hv(saltImages)%3 {
		k := int(hv(saltImages, i+1) % uint64(s.images))
		img := imgRef{src: ref{target{h, imagePath(k, false)}, pickForm(hv(saltForm, 10+i))}}
		if hv(saltSrcset, i)%3 == 0 {
			img.srcset = []srcsetItem{
				{img.src, "1x"},
				{ref{target{h, imagePath(k, true)}, pickForm(hv(saltForm, 20+i))}, "2x"},
			}
		}
		d.images = append(d.images, img)
	}
	d.links = s.pageLinks(h, idx, hv)
	return d
}

// pageLinks lists the anchors of numbered page idx (see pageDoc).
func (s *Site) pageLinks(h, idx int, hv func(uint64, ...uint64) uint64) []ref {
	var links []ref
	add := func(t target, f form) { links = append(links, ref{t, f}) }
	if idx > 0 {
		add(target{h, s.pagePath(h, (idx-1)/fanout)}, pickForm(hv(saltForm, 30)))
	}
	for c := fanout*idx + 1; c <= fanout*idx+fanout && c < s.linked; c++ {
		add(target{h, s.pagePath(h, c)}, pickForm(hv(saltForm, 31, uint64(c))))
	}
	for i := range uint64(2) {
		add(target{h, s.pagePath(h, int(hv(saltCross, i)%uint64(s.linked)))}, pickForm(hv(saltCrossForm, i)))
	}
	if n := s.cfg.Hosts; n > 1 && hv(saltCrossHost)%6 == 0 {
		other := (h + 1 + int(hv(saltCrossHost, 1)%uint64(n-1))) % n
		f := []form{formAbsolute, formProtocol}[hv(saltCrossHost, 2)%2]
		add(target{other, s.pagePath(other, int(hv(saltCrossHost, 3)%uint64(s.linked)))}, f)
	}
	if hv(saltMissing)%10 == 0 {
		add(target{h, fmt.Sprintf("/sec%d/missing-%d.html", 1+idx%s.sections, idx)}, pickForm(hv(saltForm, 32)))
	}
	if hv(saltQuery)%uint64(s.cfg.QueryVariantOneIn) == 0 {
		q := fmt.Sprintf("%s?ref=p%d", s.pagePath(h, (idx+1)%s.linked), idx)
		add(target{h, q}, pickForm(hv(saltForm, 33)))
	}
	if idx%15 == 7 {
		add(target{hostLiteral, fmt.Sprintf("http://nowhere%d.invalid/page%d.html", idx%3, idx)}, formAbsolute)
	}
	if idx < s.linked {
		for i, sp := range s.specials(h) {
			if int(s.hashOf(uint64(h), uint64(i), saltSpecial)%uint64(s.linked)) == idx {
				links = append(links, sp)
			}
		}
	}
	return links
}

// specials are the one-off links of a host, each placed on one linked page
// chosen by hash: robots-excluded and look-alike paths, redirects, a 404,
// the large file, off-site and non-HTTP links, the trap and hostile.test.
func (s *Site) specials(h int) []ref {
	out := []ref{
		{target{h, pathPrivate}, formRoot},
		{target{h, pathNotes}, formAbsolute},
		{target{h, "/r/moved"}, formRoot},
		{target{h, "/r/away"}, formAbsolute},
		{target{h, "/r/loop-a"}, formRoot},
		{target{h, pathGone}, formRoot},
		{target{h, pathLarge}, formRoot},
		{target{hostLiteral, "http://elsewhere.invalid/"}, formAbsolute},
		{target{hostLiteral, "https://elsewhere.invalid/secure/login"}, formAbsolute},
		{target{hostLiteral, "mailto:webmaster@" + s.HostName(h)}, formAbsolute},
		{target{hostLiteral, "javascript:void(0)"}, formAbsolute},
	}
	if s.cfg.Trap && h == s.trapHost {
		out = append(out, ref{target{h, pathCalendar}, formRoot})
	}
	if s.cfg.Hostile && h == s.hostileSrc {
		out = append(out, ref{target{hostHostile, "/"}, formAbsolute})
	}
	return out
}

// miscDoc builds the fixed pages: the robots-excluded /private/ area,
// /members.html (linked only from inside /private/) and
// /private-notes.html (outside the Disallow prefix despite its name).
func (s *Site) miscDoc(r resource) htmlDoc {
	h := r.host
	d := htmlDoc{
		res:     r,
		styles:  []ref{{target{h, pathCSSSite}, formRoot}},
		scripts: []ref{{target{h, pathJS}, formRelative}},
		toTop:   true,
	}
	switch {
	case r.path == pathPrivate:
		for n := 1; n <= privateDocs; n++ {
			d.links = append(d.links, ref{target{h, privateDocPath(n)}, formRelative})
		}
		d.links = append(d.links, ref{target{h, "/"}, formRoot})
	case r.idx >= 1 && r.idx <= privateDocs:
		d.links = []ref{
			{target{h, pathPrivate}, formDot},
			{target{h, pathMembers}, formRoot},
			{target{h, privateDocPath(r.idx%privateDocs + 1)}, formRelative},
		}
	default: // members and notes
		d.links = []ref{{target{h, "/"}, formRelative}}
	}
	return d
}

// calendarDoc builds one month of the trap: links to the previous and next
// months (within years 1000..9999) and to the home page.
func (s *Site) calendarDoc(r resource) htmlDoc {
	h := r.host
	d := htmlDoc{res: r, styles: []ref{{target{h, pathCSSSite}, formRoot}}, toTop: true}
	if r.idx > calendarMinYear*12 {
		d.links = append(d.links, ref{target{h, calendarPath(r.idx - 1)}, formRelative})
	}
	if r.idx < calendarMaxYear*12+11 {
		d.links = append(d.links, ref{target{h, calendarPath(r.idx + 1)}, formRelative})
	}
	d.links = append(d.links, ref{target{h, "/"}, formRoot})
	return d
}
