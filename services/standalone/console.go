package standalone

import (
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/console"
	"github.com/trawler-crawl/trawler/pkg/identity"
	"github.com/trawler-crawl/trawler/pkg/replay"
	"github.com/trawler-crawl/trawler/services/renderer"
	"github.com/trawler-crawl/trawler/services/worker"
)

// mountConsole serves the operator console on the admin listener, over
// the same API deps as /api/v1/ and this run's files.
func mountConsole(adm *admin.Server, cfg Config, d Deps, apiDeps api.Deps, tokens admin.Tokens, rdb *redis.Client,
	wcfg worker.Config, rcfg *renderer.Config, ix *cdxindex.Index, log *slog.Logger) error {
	rendering := rcfg != nil
	// The run's worker and renderer hold no identity lease: say they live.
	pid, host := os.Getpid(), "localhost"
	if h, err := os.Hostname(); err == nil {
		host = h
	}
	alive := []identity.Holder{{ID: wcfg.ID, Kind: "worker", Host: host, PID: pid}}
	if rendering {
		alive = append(alive, identity.Holder{ID: "renderer", Kind: "renderer", Host: host, PID: pid})
	}
	var g prometheus.Gatherer
	if d.Registry != nil {
		g = d.Registry
	}
	// Captures are read back (for their titles) from the run's WARCs,
	// those still being written included.
	dirs := []string{wcfg.WARCDir(), wcfg.ViralDir()}
	if rcfg != nil {
		dirs = append(dirs, rcfg.WARCDir(), rcfg.ViralDir())
	}
	rs, err := replay.New(replay.Options{Index: replay.NewCDXIndex(ix, cfg.Crawl), Records: replay.NewLiveDirs(dirs...)})
	if err != nil {
		return err
	}
	c, err := console.New(cfg.Console, console.Deps{API: apiDeps, Tokens: tokens, Redis: rdb, Gatherer: g, Replay: rs,
		Files: console.Files{DataDir: cfg.DataDir, LogDir: wcfg.LogDir(), ReportsDir: ReportsDir(cfg.DataDir),
			MetadataDir: wcfg.WARCDir() + "-metadata"},
		InProcess: alive, Logger: log.With("role", "console")})
	if err != nil {
		return err
	}
	return adm.MountConsole(tokens, c)
}
