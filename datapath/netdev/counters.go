package netdev

import "sync/atomic"

// Counters are one queue's counters. Each queue has its own, padded to a
// cache line, so workers on different queues never share a line; updates
// are made once per batch, not per packet.
type Counters struct {
	rxPackets, rxBytes, rxDropped, rxErrors atomic.Uint64
	txPackets, txBytes, txDropped, txErrors atomic.Uint64
	_                                       [64]byte
}

// AddRx counts received packets and bytes.
func (c *Counters) AddRx(pkts, bytes uint64) {
	if pkts != 0 {
		c.rxPackets.Add(pkts)
		c.rxBytes.Add(bytes)
	}
}

// AddTx counts transmitted packets and bytes.
func (c *Counters) AddTx(pkts, bytes uint64) {
	if pkts != 0 {
		c.txPackets.Add(pkts)
		c.txBytes.Add(bytes)
	}
}

// AddRxDropped counts packets dropped on receive (queue full, too big).
func (c *Counters) AddRxDropped(n uint64) {
	if n != 0 {
		c.rxDropped.Add(n)
	}
}

// AddRxErrors counts receive errors (malformed or truncated frames).
func (c *Counters) AddRxErrors(n uint64) {
	if n != 0 {
		c.rxErrors.Add(n)
	}
}

// AddTxDropped counts packets that could not be sent.
func (c *Counters) AddTxDropped(n uint64) {
	if n != 0 {
		c.txDropped.Add(n)
	}
}

// RxBatch is what one receive call of a ring device took: the packets
// delivered and their bytes, the frames dropped (no buffer, too big) and
// the malformed ones.
type RxBatch struct {
	Pkts, Bytes, Dropped, Errors int
}

// AddRxBatch counts one receive call's result.
func (c *Counters) AddRxBatch(r *RxBatch) {
	c.AddRx(uint64(r.Pkts), uint64(r.Bytes))
	c.AddRxDropped(uint64(r.Dropped))
	c.AddRxErrors(uint64(r.Errors))
}

// AddTxErrors counts transmit errors reported by the device.
func (c *Counters) AddTxErrors(n uint64) {
	if n != 0 {
		c.txErrors.Add(n)
	}
}

// Load returns a snapshot of c.
func (c *Counters) Load() Stats {
	return Stats{
		RxPackets: c.rxPackets.Load(),
		RxBytes:   c.rxBytes.Load(),
		RxDropped: c.rxDropped.Load(),
		RxErrors:  c.rxErrors.Load(),
		TxPackets: c.txPackets.Load(),
		TxBytes:   c.txBytes.Load(),
		TxDropped: c.txDropped.Load(),
		TxErrors:  c.txErrors.Load(),
	}
}

// Sum returns the counters of all queues added together.
func Sum(cs []Counters) Stats {
	var s Stats
	for i := range cs {
		s = s.Add(cs[i].Load())
	}
	return s
}
