//go:build race

package spool

// boundedTotal is smaller under the race detector, which checks every byte
// a syscall touches; 512 MiB still shows allocation does not scale.
const boundedTotal = 512 << 20
