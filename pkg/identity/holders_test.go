package identity

import (
	"context"
	"os"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

// Holders lists the live leases of one scope, with the holder's kind,
// host and pid, and not another scope's or a key that only looks like
// one; a value not written by a holder is listed without them.
func TestHolders(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	o := testOptions()
	_, l0, err := Slot(ctx, rdb, o, "w")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l0.Release() })
	other := o
	other.Scope = "s*" // a scope whose name is a glob must not match "s"'s keys
	_, l1, err := Slot(ctx, rdb, other, "w")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l1.Release() })
	if err := rdb.Set(ctx, Key("s", "odd"), "not a holder's value", 0).Err(); err != nil {
		t.Fatal(err)
	}
	hs, err := Holders(ctx, rdb, "s")
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if len(hs) != 2 || hs[0].ID != "odd" || hs[0].Kind != "" || hs[1].ID != "w0" || hs[1].Kind != o.Kind ||
		hs[1].Host != host || hs[1].PID != os.Getpid() || hs[1].ExpiresIn <= 0 {
		t.Fatalf("holders: %+v", hs)
	}
	hs, err = Holders(ctx, rdb, "s*")
	if err != nil || len(hs) != 1 || hs[0].ID != "w0" {
		t.Fatalf("holders of s*: %+v %v", hs, err)
	}
}
