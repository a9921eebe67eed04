// Package together runs the parts of a role side by side: they share one
// context, the first to fail stops the others, and every part's error is
// reported.
package together

import (
	"context"
	"errors"
	"sync"
)

// Run runs parts until ctx ends or one of them fails, which cancels the
// context the others run with; it waits for all and joins their errors.
func Run(ctx context.Context, parts ...func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(parts))
	for i, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = p(ctx); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
