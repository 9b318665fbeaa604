//go:build !race

// Package race tells tests whether the race detector is on, since its
// instrumentation allocates and allocation-count tests must then skip.
package race

// Enabled is true when built with -race.
const Enabled = false
