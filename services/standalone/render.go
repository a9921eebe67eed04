package standalone

import (
	"cmp"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/services/renderer"
	"github.com/trawler-crawl/trawler/services/worker"
)

// Values of --render.
const (
	renderAuto = "auto"
	renderOn   = "on"
	renderOff  = "off"
)

// wantsRender reports whether the profile hands any page to the renderer:
// render.handOff in the profile or in one of its sheets.
func wantsRender(p profile.Profile) bool {
	if p.Render.HandOff {
		return true
	}
	for _, s := range p.Sheets.Definitions() {
		for _, st := range s.Settings {
			if st.Key == "render.handOff" && st.Value != nil && strings.EqualFold(st.Value.Value, "true") {
				return true
			}
		}
	}
	return false
}

// chromiumPath finds the browser: the configured binary, else the first of
// the names Debian and others install it under.
func chromiumPath(configured string) (string, bool) {
	names := []string{"chromium", "chromium-browser", "google-chrome"}
	if configured != "" {
		names = []string{configured}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, true
		}
	}
	return "", false
}

// rendererConfig decides whether the run renders pages in process. With
// --render auto it does when the profile asks for rendering and Chromium is
// installed; when the profile asks and Chromium is missing it says so and
// the worker fetches those pages plainly (no hand-off that nothing would
// consume). --render on without Chromium is an error.
func rendererConfig(cfg Config, p profile.Profile, wcfg *worker.Config, log *slog.Logger) (*renderer.Config, error) {
	want := wantsRender(p)
	path, found := chromiumPath(cfg.Chromium)
	cfg.Render = cmp.Or(cfg.Render, renderAuto)
	cfg.RenderTabs = cmp.Or(cfg.RenderTabs, 2)
	switch {
	case cfg.Render == renderOff || (cfg.Render == renderAuto && !want):
		if want {
			log.Info("render.handOff is set but --render=off: those pages are fetched plainly")
		}
		wcfg.NoHandOff = true
		return nil, nil
	case !found && cfg.Render == renderOn:
		return nil, fmt.Errorf("--render=on but no Chromium found (install Debian's chromium package, or give --chromium)")
	case !found:
		log.Warn("the profile hands pages to the renderer (render.handOff) but no Chromium is installed " +
			"(apt install chromium): those pages are fetched plainly, without a browser")
		wcfg.NoHandOff = true
		return nil, nil
	}
	log.Info("rendering pages in headless Chromium", "chromium", path, "tabs", cfg.RenderTabs)
	return &renderer.Config{Crawl: cfg.Crawl, Stream: cfg.Stream, ID: "standalone", DataDir: cfg.DataDir,
		Tabs: cfg.RenderTabs, PageTimeout: 60 * time.Second, Attempts: 2, Chromium: path, NoSandbox: true}, nil
}
