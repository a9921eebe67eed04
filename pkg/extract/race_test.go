//go:build race

package extract

// raceEnabled: the race detector is on (go test -race).
const raceEnabled = true
