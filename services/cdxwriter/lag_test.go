package cdxwriter

import (
	"context"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Every poll measures every group, and leaves the writer's list of groups
// as it was: kadm's Lag reorders (and, when a group drops out mid-poll,
// overwrites) the slice it is given, which once left the index group's
// gauge unset for good.
func TestUpdateLagKeepsGroups(t *testing.T) {
	h := newHarness(t, 1)
	h.cfg.ForwardURL = "http://127.0.0.1:1/unused"
	h.produce(t, goldenEvents(t)...)
	w := h.newWriter(t)
	groups := []string{h.cfg.Group(), h.cfg.ForwardGroup()}
	want := slices.Clone(groups)
	adm := kadm.NewClient(h.cl)
	// Lag puts the groups back in map order; 20 polls leave a 2^-20
	// chance that a regression goes unseen.
	for i := range 20 {
		w.updateLag(context.Background(), adm, groups)
		if !slices.Equal(groups, want) {
			t.Fatalf("poll %d changed the groups to %q, want %q", i, groups, want)
		}
	}
	for _, g := range want {
		if got := lagOf(t, h, g); got != 3 {
			t.Errorf("lag of %s = %v, want 3 (nothing committed)", g, got)
		}
	}
}
