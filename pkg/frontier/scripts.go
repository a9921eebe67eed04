package frontier

import (
	_ "embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The Lua sources live in lua/. lib.lua is prepended to each script, and
// backoff.lua and settle.lua after it to those that end leases or count
// finished URIs, fair.lua to the claim:
// all of it runs on every call, so each script gets only what it uses.
var (
	//go:embed lua/lib.lua
	luaLib string
	//go:embed lua/settle.lua
	luaSettle string
	//go:embed lua/backoff.lua
	luaBackoff string
	//go:embed lua/admit.lua
	luaAdmit string
	//go:embed lua/claim.lua
	luaClaim string
	//go:embed lua/fair.lua
	luaFair string
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
	//go:embed lua/unhold.lua
	luaUnhold string
	//go:embed lua/ixget.lua
	luaIxGet string
	//go:embed lua/splice.lua
	luaSplice string
)

// scripts are the frontier's Lua scripts. A redis.Script holds only its
// source and SHA, so sharing one set is safe.
type scripts struct {
	admit, claim, complete, reap, renew, pauseHost, journal, purge, unhold, ixget, splice *redis.Script
}

// newScripts runs each script body as a function and then flush
// (lib.lua), so that the changes the helpers buffer are written after
// every return of the body.
func newScripts() scripts {
	s := func(src string, parts ...string) *redis.Script {
		return redis.NewScript(luaLib + "\n" + strings.Join(parts, "\n") + "\nlocal function main()\n" + src +
			"\nend\nlocal result = main()\nflush()\nreturn result\n")
	}
	return scripts{
		admit: s(luaAdmit), claim: s(luaClaim, luaFair), complete: s(luaComplete, luaBackoff, luaSettle), reap: s(luaReap, luaBackoff, luaSettle),
		renew: s(luaRenew), pauseHost: s(luaPauseHost), journal: s(luaJournal, luaBackoff, luaSettle), purge: s(luaPurge),
		unhold: s(luaUnhold), ixget: s(luaIxGet), splice: s(luaSplice),
	}
}
