//go:build !linux

package bench

import "errors"

type instructionCounter struct{}

func startInstructions() (*instructionCounter, error) {
	return nil, errors.New("bench: instruction counts need Linux perf events")
}

func (c *instructionCounter) stop() (instructions, cycles uint64, err error) { return 0, 0, nil }

func (c *instructionCounter) close() {}
