package frontier

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua sources live in lua/; lib.lua is prepended to each script.
var (
	//go:embed lua/lib.lua
	luaLib string
	//go:embed lua/admit.lua
	luaAdmit string
	//go:embed lua/claim.lua
	luaClaim string
	//go:embed lua/complete.lua
	luaComplete string
	//go:embed lua/reap.lua
	luaReap string
	//go:embed lua/renew.lua
	luaRenew string
	//go:embed lua/pausehost.lua
	luaPauseHost string
	//go:embed lua/journal.lua
	luaJournal string
	//go:embed lua/purge.lua
	luaPurge string
)

// scripts are the frontier's Lua scripts. A redis.Script holds only its
// source and SHA, so sharing one set is safe.
type scripts struct {
	admit, claim, complete, reap, renew, pauseHost, journal, purge *redis.Script
}

func newScripts() scripts {
	s := func(src string) *redis.Script { return redis.NewScript(luaLib + "\n" + src) }
	return scripts{
		admit: s(luaAdmit), claim: s(luaClaim), complete: s(luaComplete), reap: s(luaReap),
		renew: s(luaRenew), pauseHost: s(luaPauseHost), journal: s(luaJournal), purge: s(luaPurge),
	}
}
