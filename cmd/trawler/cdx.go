package main

import (
	"context"
	"errors"
	"io"
)

func runCDX(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("cdx: not built yet (issue 8)")
}
