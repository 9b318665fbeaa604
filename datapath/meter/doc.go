// Package meter owns the datapath's meters: token-bucket rate limiters
// that the meter(N) datapath action runs packets through, with the
// counters OpenFlow meter stats report.
//
// # Semantics (those of Open vSwitch's userspace datapath)
//
// A meter has one or more drop bands. Each band is a token bucket whose
// capacity is the band's burst size (its rate when the burst size is 0)
// and which refills at the band's rate: in kilobits per second (a packet
// costs its size in bits) or, with Config.Pktps, in packets per second
// (a packet costs one). Buckets start full. A packet takes tokens from
// every band that still has enough; a packet that exceeds one or more
// bands is dropped by the band with the highest rate among them, and is
// counted in that band. Every packet that reaches the meter is counted in
// the meter's packet and byte counters, dropped or not.
//
// # Concurrency
//
// Lookup is lock-free (copy-on-write map of meters, replaced on Set and
// Delete, which are rare). Each meter has its own mutex, held once per
// batch of up to 32 packets: workers metering different meters never
// contend. Lock order: Table.mu before Meter.mu (only Set/Delete take
// both).
//
// This package must not import anything outside the standard library and
// datapath/packet.
package meter
