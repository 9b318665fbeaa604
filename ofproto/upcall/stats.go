package upcall

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// Statistics: what the datapath counts for megaflows (and for packets
// handled without one) credited to the OpenFlow objects they went through.

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

// ownerOf returns the handler of the bridge called name in this one's
// datapath (this one included), or nil.
func (h *Handler) ownerOf(name string) xlate.Owner {
	if name == h.cfg.Name {
		return h
	}
	if x := h.cfg.Recirc.Bridge(name); x != nil {
		return x.Owner
	}
	return nil
}

// CreditPatch implements xlate.Owner: packets and bytes sent into patch
// port port of this bridge (tx) or received from its peer.
func (h *Handler) CreditPatch(port uint16, tx bool, packets, bytes uint64) {
	pc := h.patch.get(port)
	if tx {
		pc.txPackets.Add(packets)
		pc.txBytes.Add(bytes)
		return
	}
	pc.rxPackets.Add(packets)
	pc.rxBytes.Add(bytes)
}

// creditPatches counts packets and bytes out of each crossed patch port
// and into its peer, each in the bridge that has the port.
func (h *Handler) creditPatches(cs []xlate.PatchCrossing, packets, bytes uint64) {
	for _, c := range cs {
		if from := h.ownerOf(c.Bridge); from != nil {
			from.CreditPatch(c.Port, true, packets, bytes)
		}
		if to := h.ownerOf(c.PeerBridge); to != nil {
			to.CreditPatch(c.PeerPort, false, packets, bytes)
		}
	}
}

// PatchPortStats returns a patch port's counters as port stats: packets
// and bytes each way; the counters a patch port does not keep are all
// ones ("unavailable", printed "?"), as Open vSwitch's vports report.
func (h *Handler) PatchPortStats(port uint16) ofp.PortStats {
	pc := h.patch.get(port)
	const na = ^uint64(0)
	return ofp.PortStats{RxPackets: pc.rxPackets.Load(), RxBytes: pc.rxBytes.Load(),
		TxPackets: pc.txPackets.Load(), TxBytes: pc.txBytes.Load(),
		RxDropped: na, TxDropped: na, RxErrors: na, TxErrors: na, RxFrameErr: na, RxOverErr: na, RxCRCErr: na, Collisions: na}
}

// PatchRxPackets returns the packets patch port port received (crossed
// into it), the counter a BFD session on it decays by.
func (h *Handler) PatchRxPackets(port uint16) uint64 { return h.patch.get(port).rxPackets.Load() }

// ForgetPatches drops the counters of ports that are no longer patch
// ports (keep reports false), so a port number reused later starts from
// zero.
func (h *Handler) ForgetPatches(keep func(port uint16) bool) { h.patch.forget(keep) }

// countLookups credits n packets to the table lookups of a translation,
// each in the bridge that made it.
func (h *Handler) countLookups(ls []xlate.TableLookup, n uint64) {
	for _, tl := range ls {
		if tl.Bridge == h.cfg.Name {
			h.tables.CountLookups(tl.Table, tl.Matched, n)
		} else if x := h.cfg.Recirc.Bridge(tl.Bridge); x != nil {
			x.Tables.CountLookups(tl.Table, tl.Matched, n)
		}
	}
}

// creditBonds adds the bytes sent through balanced bonds to their
// buckets' load (Open vSwitch's bond_account).
func creditBonds(uses []xlate.BondUse, bytes uint64) {
	for _, u := range uses {
		u.Bond.Account(u.Hash, bytes)
	}
}

// creditMirrors counts packets sent to port mirrors (Mirror.statistics).
func creditMirrors(uses []xlate.MirrorUse, packets, bytes uint64) {
	for _, u := range uses {
		u.X.CreditMirrors(u.Mask, packets, bytes)
	}
}

// creditUpcall credits the packet of an upcall to the rules and tables
// that translated it, as Open vSwitch's upcall handler does: the datapath
// executes it apart, so no megaflow carries its statistics.
func (h *Handler) creditUpcall(out *xlate.Out, u *dpif.Upcall) {
	n := uint64(0)
	if u.Packet != nil {
		n = uint64(u.Packet.Len())
	}
	h.CreditPacket(out, n)
}

// CreditPacket credits one packet of n bytes to the rules, table
// lookups and patch ports of its translation (a packet handled without a
// megaflow: an uninstalled upcall, a packet-out).
func (h *Handler) CreditPacket(out *xlate.Out, n uint64) {
	now := time.Now()
	for _, r := range out.Rules {
		r.Stats.Add(1, n, now)
	}
	h.countLookups(out.Tables, 1)
	for _, g := range out.Groups {
		g.Credit(1, n)
	}
	h.creditPatches(out.Patches, 1, n)
	creditMirrors(out.Mirrors, 1, n)
	creditBonds(out.Bonds, n)
	for _, s := range out.BFDRx {
		s.AccountRx(1)
	}
}
