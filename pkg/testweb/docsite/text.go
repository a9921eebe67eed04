package docsite

import (
	"fmt"
	"html"
	"math/rand/v2"
	"strings"
)

// prose writes documentation-like HTML text from one page's random
// stream. Each page ranks every word list in its own order and draws from
// it with a Zipf law, so each page has favourite words (its topic) the way
// a real page does, and sentences are built from a small grammar with many
// shapes rather than from repeated blocks.
type prose struct {
	r                               *rand.Rand
	det, noun, verb, adj, adv, prep picker
	sub, modal, opener              picker
}

// picker draws from a word list, ranked per page, with a Zipf law.
type picker struct {
	words []string
	z     *rand.Zipf
}

// newPicker ranks words in a page-specific order.
func newPicker(r *rand.Rand, words []string) picker {
	ranked := append([]string(nil), words...)
	r.Shuffle(len(ranked), func(i, j int) { ranked[i], ranked[j] = ranked[j], ranked[i] })
	return picker{words: ranked, z: rand.NewZipf(r, 1.07, 2, uint64(len(ranked)-1))}
}

// pick returns one word.
func (p picker) pick() string { return p.words[p.z.Uint64()] }

// newProse prepares the generator for one page.
func newProse(r *rand.Rand) *prose {
	return &prose{
		r:      r,
		det:    newPicker(r, determiners[:]),
		noun:   newPicker(r, nouns[:]),
		verb:   newPicker(r, verbs[:]),
		adj:    newPicker(r, adjectives[:]),
		adv:    newPicker(r, adverbs[:]),
		prep:   newPicker(r, prepositions[:]),
		sub:    newPicker(r, subordinators[:]),
		modal:  newPicker(r, modals[:]),
		opener: newPicker(r, openers[:]),
	}
}

// chance reports true with probability num/den.
func (p *prose) chance(num, den int) bool { return p.r.IntN(den) < num }

// plural makes a regular English plural.
func plural(n string) string {
	switch {
	case strings.HasSuffix(n, "s"), strings.HasSuffix(n, "sh"), strings.HasSuffix(n, "ch"), strings.HasSuffix(n, "x"):
		return n + "es"
	case strings.HasSuffix(n, "y") && !strings.ContainsAny(n[len(n)-2:len(n)-1], "aeiou"):
		return n[:len(n)-1] + "ies"
	}
	return n + "s"
}

// thirdPerson conjugates a verb for he/she/it.
func thirdPerson(v string) string { return plural(v) }

// participle gives the past participle of a verb.
func participle(v string) string {
	if p, ok := participles[v]; ok {
		return p
	}
	switch {
	case strings.HasSuffix(v, "e"):
		return v + "d"
	case strings.HasSuffix(v, "y") && !strings.ContainsAny(v[len(v)-2:len(v)-1], "aeiou"):
		return v[:len(v)-1] + "ied"
	case v == "stop" || v == "skip" || v == "submit" || v == "wrap":
		return v + v[len(v)-1:] + "ed"
	}
	return v + "ed"
}

// gerund gives the -ing form of a verb.
func gerund(v string) string {
	switch {
	case v == "stop" || v == "skip" || v == "submit" || v == "run" || v == "set" || v == "split" || v == "wrap":
		return v + v[len(v)-1:] + "ing"
	case strings.HasSuffix(v, "e"):
		return v[:len(v)-1] + "ing"
	}
	return v + "ing"
}

// nounPhrase is a determiner, maybe an adjective, and a noun (or a plural
// with no determiner).
func (p *prose) nounPhrase() string {
	s, _ := p.subject()
	return s
}

// subject is a noun phrase and whether it is plural, for verb agreement.
func (p *prose) subject() (string, bool) {
	n := p.noun.pick()
	if p.chance(1, 4) {
		if p.chance(1, 2) {
			return p.adj.pick() + " " + plural(n), true
		}
		return plural(n), true
	}
	if p.chance(2, 5) {
		return p.det.pick() + " " + p.adj.pick() + " " + n, false
	}
	return p.det.pick() + " " + n, false
}

// ident is a code identifier such as retryLimit or Server.Reload.
func (p *prose) ident() string {
	v, n := p.verb.pick(), p.noun.pick()
	n = strings.ReplaceAll(n, " ", "")
	switch p.r.IntN(4) {
	case 0:
		return v + strings.ToUpper(n[:1]) + n[1:] + "()"
	case 1:
		return strings.ToUpper(n[:1]) + n[1:] + "." + strings.ToUpper(v[:1]) + v[1:]
	case 2:
		return "--" + v + "-" + n
	}
	return p.adj.pick() + strings.ToUpper(n[:1]) + n[1:]
}

// clause is a subject, a verb and usually an object.
func (p *prose) clause() string {
	subj, many := p.subject()
	v, conj, be := p.verb.pick(), thirdPerson, "is"
	if many {
		conj, be = func(v string) string { return v }, "are"
	}
	var b strings.Builder
	b.WriteString(subj)
	switch p.r.IntN(5) {
	case 0:
		fmt.Fprintf(&b, " %s %s", p.modal.pick(), v)
	case 1:
		fmt.Fprintf(&b, " %s %s", be, participle(v))
		if p.chance(1, 2) {
			fmt.Fprintf(&b, " %s %s", p.prep.pick(), p.nounPhrase())
		}
		return b.String()
	case 2:
		fmt.Fprintf(&b, " %s %s", p.adv.pick(), conj(v))
	default:
		b.WriteString(" " + conj(v))
	}
	b.WriteString(" " + p.nounPhrase())
	if p.chance(1, 3) {
		fmt.Fprintf(&b, " %s %s", p.prep.pick(), p.nounPhrase())
	}
	return b.String()
}

// sentence returns one sentence in one of several shapes.
func (p *prose) sentence() string {
	var s string
	switch p.r.IntN(10) {
	case 0, 1, 2:
		s = p.clause()
	case 3:
		s = p.sub.pick() + " " + p.clause() + ", " + p.clause()
	case 4:
		s = p.opener.pick() + " " + p.clause()
	case 5:
		s = fmt.Sprintf("to %s %s, %s %s", p.verb.pick(), p.nounPhrase(), p.verb.pick(), p.nounPhrase())
	case 6:
		s = fmt.Sprintf("%s, which %s %s", p.clause(), thirdPerson(p.verb.pick()), p.nounPhrase())
	case 7:
		s = fmt.Sprintf("%s <code>%s</code> %s %s", p.verb.pick(), html.EscapeString(p.ident()), p.sub.pick(), p.clause())
	case 8:
		s = fmt.Sprintf("up to %d %s can be %s %s %s", 2+p.r.IntN(5000), plural(p.noun.pick()), participle(p.verb.pick()),
			p.prep.pick(), p.nounPhrase())
	default:
		s = fmt.Sprintf("%s; %s", p.clause(), p.clause())
	}
	end := "."
	if p.chance(1, 25) {
		end = "?"
	}
	return strings.ToUpper(s[:1]) + s[1:] + end
}

// paragraph writes a <p> of several sentences; link, when not empty, is an
// <a> element placed at a sentence boundary.
func (p *prose) paragraph(b *strings.Builder, link string) {
	n := 2 + p.r.IntN(7)
	at := -1
	if link != "" {
		at = p.r.IntN(n)
	}
	b.WriteString("<p>")
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i == at {
			fmt.Fprintf(b, "See %s for %s. ", link, p.nounPhrase())
		}
		b.WriteString(p.sentence())
	}
	b.WriteString("</p>\n")
}

// codeBlock writes a <pre> example of a few command or config lines.
func (p *prose) codeBlock(b *strings.Builder) {
	b.WriteString("<pre><code>")
	for range 2 + p.r.IntN(8) {
		switch p.r.IntN(3) {
		case 0:
			fmt.Fprintf(b, "$ tool %s %s=%d\n", p.verb.pick(), html.EscapeString(p.ident()), p.r.IntN(1000))
		case 1:
			fmt.Fprintf(b, "%s: %s\n", strings.ReplaceAll(p.noun.pick(), " ", "_"), p.adj.pick())
		default:
			fmt.Fprintf(b, "  %s = %s(%s, %d)\n", strings.ReplaceAll(p.noun.pick(), " ", ""), html.EscapeString(p.ident()),
				p.adj.pick(), p.r.IntN(100))
		}
	}
	b.WriteString("</code></pre>\n")
}

// list writes a <ul> of short items.
func (p *prose) list(b *strings.Builder) {
	b.WriteString("<ul>\n")
	for range 3 + p.r.IntN(5) {
		fmt.Fprintf(b, "<li><code>%s</code>: %s</li>\n", html.EscapeString(p.ident()), p.sentence())
	}
	b.WriteString("</ul>\n")
}

// table writes a small settings table.
func (p *prose) table(b *strings.Builder) {
	b.WriteString("<table>\n<tr><th>Setting</th><th>Default</th><th>Description</th></tr>\n")
	for range 3 + p.r.IntN(6) {
		fmt.Fprintf(b, "<tr><td><code>%s</code></td><td>%d</td><td>%s</td></tr>\n",
			html.EscapeString(p.ident()), p.r.IntN(10000), p.sentence())
	}
	b.WriteString("</table>\n")
}

// heading returns a short title-cased heading.
func (p *prose) heading() string {
	v := p.verb.pick()
	n := p.nounPhrase()
	switch p.r.IntN(3) {
	case 0:
		g := gerund(v)
		return strings.ToUpper(g[:1]) + g[1:] + " " + n
	case 1:
		return "How to " + v + " " + n
	}
	return strings.ToUpper(n[:1]) + n[1:]
}
