package together

import (
	"context"
	"errors"
	"testing"
)

// A failing part stops the others, and every error is reported; parts
// that all end well give nil.
func TestRun(t *testing.T) {
	boom := errors.New("boom")
	waiter := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	err := Run(context.Background(), waiter, func(context.Context) error { return boom }, waiter)
	if !errors.Is(err, boom) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want boom and the others canceled", err)
	}
	if err := Run(context.Background(), func(context.Context) error { return nil }); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}
