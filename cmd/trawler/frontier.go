package main

import (
	"context"
	"errors"
	"io"
)

func runFrontier(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("frontier: not built yet (issue 3)")
}
