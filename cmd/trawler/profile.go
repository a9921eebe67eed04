package main

import (
	"context"
	"errors"
	"io"
)

func runProfile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("profile: not built yet (issue 6)")
}
