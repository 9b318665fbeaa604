package ofswitch

import (
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// patchCounters are one patch port's counters. Patch ports have no
// datapath port: a packet crosses one inside translation or through
// NORMAL's recirculation into the peer, so the megaflows that cross it
// credit it (as they credit rules) when their statistics are pushed.
type patchCounters struct {
	rxPackets, rxBytes, txPackets, txBytes atomic.Uint64
}

// patchStats holds a bridge's patch port counters by OpenFlow port.
type patchStats struct {
	mu sync.Mutex
	m  map[uint16]*patchCounters
}

func (ps *patchStats) get(port uint16) *patchCounters {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[uint16]*patchCounters{}
	}
	c := ps.m[port]
	if c == nil {
		c = &patchCounters{}
		ps.m[port] = c
	}
	return c
}

// forget drops the counters of ports that are no longer patch ports, so
// a port number reused later starts from zero.
func (ps *patchStats) forget(keep func(port uint16) bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for p := range ps.m {
		if !keep(p) {
			delete(ps.m, p)
		}
	}
}

// bridgeNamed returns b or the bridge of the same datapath called name.
func (b *Bridge) bridgeNamed(name string) *Bridge {
	if name == b.cfg.Name {
		return b
	}
	if b.cfg.Recirc == nil {
		return nil
	}
	if x := b.cfg.Recirc.Bridge(name); x != nil {
		if ob, ok := x.Owner.(*Bridge); ok {
			return ob
		}
	}
	return nil
}

// creditPatches counts packets and bytes out of each crossed patch port
// and into its peer.
func (b *Bridge) creditPatches(cs []xlate.PatchCrossing, packets, bytes uint64) {
	for _, c := range cs {
		if from := b.bridgeNamed(c.Bridge); from != nil {
			pc := from.patch.get(c.Port)
			pc.txPackets.Add(packets)
			pc.txBytes.Add(bytes)
		}
		if to := b.bridgeNamed(c.PeerBridge); to != nil {
			pc := to.patch.get(c.PeerPort)
			pc.rxPackets.Add(packets)
			pc.rxBytes.Add(bytes)
		}
	}
}

// patchPortStats returns a patch port's counters as port stats: packets
// and bytes each way; the counters a patch port does not keep are all
// ones ("unavailable", printed "?"), as Open vSwitch's vports report.
func (b *Bridge) patchPortStats(port uint16) ofp.PortStats {
	pc := b.patch.get(port)
	const na = ^uint64(0)
	return ofp.PortStats{RxPackets: pc.rxPackets.Load(), RxBytes: pc.rxBytes.Load(),
		TxPackets: pc.txPackets.Load(), TxBytes: pc.txBytes.Load(),
		RxDropped: na, TxDropped: na, RxErrors: na, TxErrors: na, RxFrameErr: na, RxOverErr: na, RxCRCErr: na, Collisions: na}
}

// countLookups credits n packets to the table lookups of a translation,
// each in the bridge that made it.
func (b *Bridge) countLookups(ls []xlate.TableLookup, n uint64) {
	for _, tl := range ls {
		if tb := b.bridgeNamed(tl.Bridge); tb != nil {
			tb.tables.CountLookups(tl.Table, tl.Matched, n)
		}
	}
}
