package standalone

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/console"
	"github.com/trawler-crawl/trawler/services/worker"
)

// mountConsole serves the operator console on the admin listener, over
// the same API deps as /api/v1/ and this run's files.
func mountConsole(adm *admin.Server, cfg Config, d Deps, apiDeps api.Deps, tokens admin.Tokens, rdb *redis.Client,
	wcfg worker.Config, log *slog.Logger) error {
	var g prometheus.Gatherer
	if d.Registry != nil {
		g = d.Registry
	}
	c, err := console.New(cfg.Console, console.Deps{API: apiDeps, Tokens: tokens, Redis: rdb, Gatherer: g,
		Files: console.Files{DataDir: cfg.DataDir, LogDir: wcfg.LogDir(), ReportsDir: ReportsDir(cfg.DataDir),
			MetadataDir: wcfg.WARCDir() + "-metadata"},
		Logger: log.With("role", "console")})
	if err != nil {
		return err
	}
	return adm.MountConsole(tokens, c)
}
