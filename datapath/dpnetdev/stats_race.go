//go:build race

package dpnetdev

import "sync/atomic"

// addStats adds one sub-batch to a flow's counters with atomics, so that
// race-detector builds see no data race (see stats_norace.go).
func (f *dpFlow) addStats(pkts, bytes uint64, used int64, flags uint16) {
	atomic.AddUint64(&f.packets, pkts)
	atomic.AddUint64(&f.bytes, bytes)
	atomic.StoreInt64(&f.used, used)
	if flags != 0 {
		atomic.OrUint32(&f.tcpFlags, uint32(flags))
	}
}
