package testweb

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
)

// Paths of the scripted pages (Config.Scripted), for the browser renderer.
const (
	// ScriptedPrefix starts every scripted path.
	ScriptedPrefix = "/scripted/"
	// PathScripted is a page whose script adds links (PathScriptLinks +
	// n), loads PathScriptData with fetch() and adds the link it names
	// (PathFromFetch), sets the src of an image far below the fold when it
	// scrolls into view (PathLazyImage), and asks for the trap address
	// and the cloud metadata address, which a crawler must refuse.
	PathScripted    = "/scripted/"
	PathScriptApp   = "/scripted/app.js"
	PathScriptData  = "/scripted/data.json"
	PathScriptLinks = "/scripted/js-only/"
	PathFromFetch   = "/scripted/from-fetch"
	PathLazyImage   = "/scripted/lazy.png"
	// PathHeavy + n is a page with HeavySubresources subresources (4
	// stylesheets, 6 images, 6 scripts, 4 fetch() calls), all of them
	// distinct per page.
	PathHeavy = "/scripted/heavy/"
	// HeavySubresources is how many subresources a PathHeavy page loads.
	HeavySubresources = 20
	// ScriptLinks is how many links the scripted page's script adds.
	ScriptLinks = 3
	// PathPrivateEmbed is an image of the scripted page that robots.txt
	// disallows (it is under the Disallow prefix).
	PathPrivateEmbed = privatePrefix + "scripted.png"
)

// trap is a listener on a loopback address outside the site's range that
// counts connections and closes them.
type trap struct {
	ln    net.Listener
	conns atomic.Int64
}

func startTrap(ctx context.Context, ip netip.Addr) (*trap, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", netip.AddrPortFrom(ip, 0).String())
	if err != nil {
		return nil, fmt.Errorf("trap listener on %s: %w", ip, err)
	}
	t := &trap{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.conns.Add(1)
			_ = c.Close()
		}
	}()
	return t, nil
}

func (t *trap) close() { _ = t.ln.Close() }

// TrapAddr is the address the scripted page asks for that a crawler must
// never reach ("" without Config.Scripted).
func (srv *Server) TrapAddr() string {
	if srv.trap == nil {
		return ""
	}
	return srv.trap.ln.Addr().String()
}

// TrapConnections counts connections made to TrapAddr: 0 when the crawler
// kept its address guard.
func (srv *Server) TrapConnections() int64 {
	if srv.trap == nil {
		return 0
	}
	return srv.trap.conns.Load()
}

// serveScripted serves the scripted pages.
func (srv *Server) serveScripted(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == PathScripted:
		writeBody(w, r, http.StatusOK, ctHTML, []byte(scriptedPage), false)
	case p == PathScriptApp:
		writeBody(w, r, http.StatusOK, ctJS, []byte(srv.scriptedApp()), false)
	case p == PathScriptData:
		writeBody(w, r, http.StatusOK, "application/json", []byte(`{"next":"`+PathFromFetch+`"}`), false)
	case p == PathLazyImage:
		writeBody(w, r, http.StatusOK, ctPNG, tinyPNG(), false)
	case p == PathFromFetch || strings.HasPrefix(p, PathScriptLinks):
		writeBody(w, r, http.StatusOK, ctHTML, []byte("<!DOCTYPE html><html><body><p>reached</p></body></html>"), false)
	case strings.HasPrefix(p, PathHeavy):
		srv.serveHeavy(w, r, strings.TrimPrefix(p, PathHeavy))
	default:
		writeBody(w, r, http.StatusNotFound, ctHTML, []byte(notFoundBody), false)
	}
}

const scriptedPage = `<!DOCTYPE html>
<html><head><title>Scripted</title><link rel="stylesheet" href="/scripted/heavy/r/0/s0.css"></head>
<body><h1>Scripted</h1><div id="js"></div>
<div style="height:1500px"></div>
<img id="lazy" data-src="` + PathLazyImage + `" width="10" height="10" alt="">
<img src="` + PathPrivateEmbed + `" width="10" height="10" alt="">
<script src="` + PathScriptApp + `"></script>
</body></html>
`

// scriptedApp is the scripted page's script.
func (srv *Server) scriptedApp() string {
	var b strings.Builder
	b.WriteString("var box=document.getElementById('js');\n")
	for i := range ScriptLinks {
		fmt.Fprintf(&b, "var a%d=document.createElement('a');a%d.href='%s%d';a%d.textContent='j';box.appendChild(a%d);\n", i, i, PathScriptLinks, i, i, i)
	}
	b.WriteString("fetch('" + PathScriptData + "').then(function(r){return r.json()}).then(function(d){var b=document.createElement('a');b.href=d.next;b.textContent='n';document.body.appendChild(b);});\n")
	b.WriteString("new IntersectionObserver(function(es){es.forEach(function(e){if(e.isIntersecting){e.target.src=e.target.dataset.src;}})}).observe(document.getElementById('lazy'));\n")
	if a := srv.TrapAddr(); a != "" {
		b.WriteString("fetch('http://" + a + "/steal').catch(function(){});\n")
	}
	b.WriteString("fetch('http://169.254.169.254/latest/meta-data/').catch(function(){});\n")
	return b.String()
}

// serveHeavy serves PathHeavy pages ("N") and their subresources
// ("r/N/<name>").
func (srv *Server) serveHeavy(w http.ResponseWriter, r *http.Request, rest string) {
	if res, ok := strings.CutPrefix(rest, "r/"); ok {
		switch {
		case strings.HasSuffix(res, ".css"):
			writeBody(w, r, http.StatusOK, ctCSS, []byte("p{margin:2px}h1{color:#333}"), false)
		case strings.HasSuffix(res, ".js"):
			writeBody(w, r, http.StatusOK, ctJS, []byte("var x"+strconv.Itoa(len(res))+"=1;"), false)
		case strings.HasSuffix(res, ".json"):
			writeBody(w, r, http.StatusOK, "application/json", []byte(`{"ok":true}`), false)
		default:
			writeBody(w, r, http.StatusOK, ctPNG, tinyPNG(), false)
		}
		return
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 {
		writeBody(w, r, http.StatusNotFound, ctHTML, []byte(notFoundBody), false)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html><html><head><title>Heavy %d</title>", n)
	for i := range 4 {
		fmt.Fprintf(&b, `<link rel="stylesheet" href="%sr/%d/s%d.css">`, PathHeavy, n, i)
	}
	fmt.Fprintf(&b, "</head><body><h1>Heavy %d</h1>", n)
	for i := range 6 {
		fmt.Fprintf(&b, `<img src="%sr/%d/i%d.png" width="40" height="40" alt=""><p>%s</p>`, PathHeavy, n, i, strings.Repeat("text ", 80))
	}
	for i := range 6 {
		fmt.Fprintf(&b, `<script src="%sr/%d/j%d.js"></script>`, PathHeavy, n, i)
	}
	fmt.Fprintf(&b, `<script>for(var i=0;i<4;i++){fetch('%sr/%d/d'+i+'.json')}</script><a href="%s%d">next</a></body></html>`,
		PathHeavy, n, PathHeavy, n+1)
	writeBody(w, r, http.StatusOK, ctHTML, []byte(b.String()), false)
}

// tinyPNG is a 4x4 PNG.
func tinyPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}
