//go:build !race

package dpnetdev

// addStats adds one sub-batch to a flow's counters. Only the worker that
// owns the flow writes them, so the updates need no atomic read-modify-
// write (a locked instruction per counter per sub-batch, which at one
// packet per megaflow per batch costs more than the lookup). Readers load
// with atomics; the Go memory model guarantees a word-sized racing read
// sees some written value, never a torn one — Open vSwitch relies on the
// same for its per-PMD flow stats (non_atomic_ullong_add). Builds with the
// race detector use atomic adds instead (stats_race.go).
func (f *dpFlow) addStats(pkts, bytes uint64, used int64, flags uint16) {
	f.packets += pkts
	f.bytes += bytes
	f.used = used
	f.tcpFlags |= uint32(flags)
}
