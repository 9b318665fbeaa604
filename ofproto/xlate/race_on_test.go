//go:build race

package xlate_test

// raceEnabled: the race detector makes sync.Pool drop a quarter of what
// it is given back.
const raceEnabled = true
