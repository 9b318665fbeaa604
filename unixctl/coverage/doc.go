// Package coverage counts named events, as Open vSwitch's coverage
// counters do, and reports them through coverage/show with the event
// rates over the last 5 seconds, minute and hour.
//
// # Overview
//
// The daemon owns one [Registry] (no global state) and hands counters to
// the parts that count: [Counter.Add] is one atomic add, safe on hot paths
// (no allocation, no lock). [Registry.Tick] samples every counter; call it
// every 5 seconds ([Registry.Run] does). coverage/show prints, in
// registration order, every counter that was ever hit, then how many never
// were.
//
// # Imports
//
// The standard library and unixctl (for registration only); nothing
// else of gvs (tests/deps_test.go).
package coverage
