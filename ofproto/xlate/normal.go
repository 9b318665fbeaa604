package xlate

import (
	"sync/atomic"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/mcsnoop"
)

// NORMAL has two translations (vlan.go decides which):
//
//   - per MAC address, as Open vSwitch's xlate_normal: the source is
//     learned during translation (a packet, not a revalidation), the
//     destination looked up then, and the megaflow matches both
//     addresses, so every new address comes to userspace once and a
//     change of the table revalidates the megaflows (MACTableChanged);
//   - the datapath's mac_learn action: one megaflow per input port and
//     VLAN serves any number of addresses, learned and looked up by the
//     datapath for every packet.
//
// A bridge translates per MAC address while its table holds at most
// SetMACLearnActionThreshold entries (Open vSwitch's default table size,
// so a bridge within Open vSwitch's limits gets Open vSwitch's
// megaflows, traces and flow dumps), and with the action beyond that,
// where one megaflow per address pair and a revalidation per learned
// address would cost what the action saves; it returns to per-address
// megaflows when the table is down to half the threshold.

// DefaultMACLearnActionThreshold is the threshold of a bridge whose
// other_config does not set mac-learning-action-threshold: Open
// vSwitch's default mac-table-size.
const DefaultMACLearnActionThreshold = 2048

// normalMode is a bridge's choice between NORMAL's translations.
type normalMode struct {
	// fdb holds the datapath's MAC tables; nil: always the action (a
	// translator without a datapath, in unit tests).
	fdb atomic.Pointer[l2fib.Registry]
	// above is the threshold; 0: always the action.
	above atomic.Int64
	// action is set while NORMAL is the mac_learn action.
	action atomic.Bool
	// changed is set when the translation changed, until
	// MACTableChanged reports it.
	changed atomic.Bool
	// seen is the table's change count MACTableChanged last saw.
	seen atomic.Uint64
}

// SetMACTables gives the translator the datapath's MAC tables, which
// NORMAL translated per MAC address reads and learns in.
func (x *Xlator) SetMACTables(r *l2fib.Registry) { x.normal.fdb.Store(r) }

// SetMACLearnActionThreshold sets how many entries the bridge's MAC
// table holds before NORMAL becomes the datapath's mac_learn action (0:
// always).
func (x *Xlator) SetMACLearnActionThreshold(n int) {
	if n < 0 {
		n = 0
	}
	if x.normal.above.Swap(int64(n)) != int64(n) {
		x.normal.changed.Store(true)
	}
}

// MACLearnAction reports whether NORMAL is the datapath's mac_learn
// action now.
func (x *Xlator) MACLearnAction() bool {
	return x.normal.fdb.Load() == nil || x.normal.action.Load()
}

// MACTableChanged reports, once per change, that NORMAL's megaflows may
// be stale: the MAC table gained, moved or lost an entry while NORMAL
// translates per MAC address, or NORMAL changed translation. The
// bridge's upcall layer asks after each miss and before each
// revalidation round (Open vSwitch's REV_MAC_LEARNING).
func (x *Xlator) MACTableChanged() bool {
	m := &x.normal
	changed := m.changed.Swap(false)
	reg, snap := m.fdb.Load(), x.snap.Load()
	if reg == nil || snap == nil {
		return changed
	}
	if t := reg.Get(snap.FDBTable); t != nil {
		n := t.Changes()
		if m.seen.Swap(n) != n && !m.action.Load() {
			changed = true
		}
	}
	return changed
}

// perMACTable returns the bridge's MAC table when NORMAL translates per
// MAC address, nil when it is the mac_learn action; it switches between
// them as the table grows past the threshold or shrinks to half of it.
func (c *ctx) perMACTable() (*l2fib.Table, *l2fib.Registry) {
	m := &c.x.normal
	reg := m.fdb.Load()
	if reg == nil {
		return nil, nil
	}
	t := reg.Get(c.snap.FDBTable)
	if t == nil {
		return nil, nil
	}
	above, act := m.above.Load(), m.action.Load()
	want := act
	switch n := int64(t.Count()); {
	case above == 0:
		want = true
	case !act && n > above:
		want = true
	case act && n <= above/2:
		want = false
	}
	if want != act && m.action.CompareAndSwap(act, want) {
		m.changed.Store(true)
	}
	if want {
		return nil, nil
	}
	return t, reg
}

// MACUse is a source address a per-address NORMAL megaflow learns: each
// time the megaflow's statistics show new packets the entry is learned
// again (Open vSwitch's XC_NORMAL), so that addresses whose packets
// never leave the datapath do not age out.
type MACUse struct {
	Tables *l2fib.Registry
	Table  uint32
	Port   uint32
	VLAN   uint16
	MAC    [6]byte
}

// RefreshMACs learns the sources of a used megaflow again.
func RefreshMACs(us []MACUse) {
	for i := range us {
		u := &us[i]
		if t := u.Tables.Get(u.Table); t != nil {
			t.Learn(u.VLAN, l2fib.MAC(u.MAC), u.Port)
		}
	}
}

// fdbPort is port q's number in its bridge's MAC table: its bond's, a
// virtual one for a port without a datapath port of its own (patch,
// tunnel), else its datapath port.
func fdbPort(q *Port) uint32 {
	switch {
	case q.Bundle != nil && q.Bundle.Bond != nil:
		return q.Bundle.FDB
	case q.ODP == NoODP || q.Tunnel != nil:
		return VirtualFDBPort(q.OFPort)
	}
	return q.ODP
}

// normalPerMAC is NORMAL translated per MAC address (xlate_normal): learn
// the source on the input port, then output to the port the destination
// was learned on, or flood. p holds what the input checks decided (the
// learning port, a balance-slb bond's reflection check); only, when not
// nil, are the ports multicast snooping allows.
func (c *ctx) normalPerMAC(t *l2fib.Table, reg *l2fib.Registry, in *Port, p *odp.MACLearnParams, vlan, pcp uint16, only map[mcsnoop.PortID]bool) {
	k, w := &c.flow.Key, &c.wc.Key
	all := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if k.EthType == flow.EthTypeARP && k.EthDst == all {
		// is_gratuitous_arp reads the opcode, and a request's addresses.
		w.NwProto = 0xff
		if k.NwProto == 1 {
			w.NwSrc, w.NwDst = ^uint32(0), ^uint32(0)
		}
	}
	at := p.LearnPort
	if at == 0 {
		at = fdbPort(in)
	}
	if k.EthSrc[0]&1 == 0 {
		src := l2fib.MAC(k.EthSrc)
		if p.DropIfMoved {
			if port, ok := t.Lookup(vlan, src); ok && port != at {
				c.tr.notef("SLB bond thinks this packet looped back, dropping")
				return
			}
		}
		// A packet is learned from (an upcall, a packet-out, a trace
		// with a packet); a revalidation only records what to refresh.
		if c.in.Packet != nil {
			before := t.Changes()
			t.Learn(vlan, src, at)
			if t.Changes() != before {
				name := in.Name
				if in.Bundle != nil {
					name = in.Bundle.Name
				}
				c.tr.notef("learned that %s is on port %s in VLAN %d", src, name, vlan)
			}
		}
		c.out.MACs = append(c.out.MACs, MACUse{Tables: reg, Table: c.snap.FDBTable, Port: at, VLAN: vlan, MAC: k.EthSrc})
	}
	members := c.normalMembers(in, vlan, only)
	if k.EthDst[0]&1 == 0 {
		if port, ok := t.Lookup(vlan, l2fib.MAC(k.EthDst)); ok {
			if port == at {
				c.tr.notef("learned port is input port, dropping")
				return
			}
			for _, q := range members {
				if fdbPort(q) == port {
					c.tr.notef("forwarding to learned port")
					c.outputNormal(q, vlan, pcp)
					return
				}
			}
			// Learned on a port outside the VLAN (the flush after a
			// configuration change has not run): flood, as the action.
		}
	}
	// A multicast destination is never learned.
	c.tr.notef("no learned MAC for destination, flooding")
	last := c.last
	c.last = false
	for _, q := range members {
		if fdbPort(q) != at {
			c.outputNormal(q, vlan, pcp)
		}
	}
	c.last = last
	c.smp.flood(true)
}

// normalMembers lists, in flood order, the ports NORMAL may send a
// packet of vlan from in to (a bond once, by its first member): in the
// VLAN, not a mirror's output, forwarding by the spanning tree, allowed
// by multicast snooping.
func (c *ctx) normalMembers(in *Port, vlan uint16, only map[mcsnoop.PortID]bool) []*Port {
	var ms []*Port
	inID := McastPortID(in)
	for _, q := range c.snap.Sorted {
		if !c.normalMayReach(in, inID, q, vlan, only) {
			continue
		}
		if q.ODP == NoODP && q.PeerBridge == "" && q.Tunnel == nil {
			continue
		}
		if q.Bundle != nil && q.Bundle.Bond != nil && bondListed(ms, q.Bundle) {
			continue
		}
		ms = append(ms, q)
	}
	return ms
}

// normalMayReach says whether NORMAL, in either translation, may send a
// packet of vlan from in (McastPortID inID) to q: allowed by multicast
// snooping (only, when not nil; the input stays listed), in the VLAN,
// not a mirror's output port (which gets only mirrored packets), and
// forwarding by the spanning tree (a port that learns but does not
// forward only learns; stp.go).
func (c *ctx) normalMayReach(in *Port, inID mcsnoop.PortID, q *Port, vlan uint16, only map[mcsnoop.PortID]bool) bool {
	if only != nil && !only[McastPortID(q)] && McastPortID(q) != inID {
		return false
	}
	if !includesVLAN(q, vlan) || c.mir.isOutput(q) {
		return false
	}
	return q == in || stpForwards(in) && !c.stpSkipOutput(q)
}

func bondListed(ms []*Port, b *Bundle) bool {
	for _, m := range ms {
		if m.Bundle == b {
			return true
		}
	}
	return false
}

// outputNormal sends the packet to q with the tag q takes for vlan
// (output_normal): a bond through the member it chooses, a patch port
// into its peer, a tunnel through its route.
func (c *ctx) outputNormal(q *Port, vlan, pcp uint16) {
	save := c.flow.VLANs[0]
	if tci := outputTCI(q, vlan, pcp); tci != 0 {
		tpid := save.TPID
		if save.TCI&flow.VLANCFI == 0 || tpid == 0 {
			tpid = flow.EthTypeVLAN
		}
		c.flow.VLANs[0] = flow.VLAN{TPID: tpid, TCI: tci | flow.VLANCFI}
	} else {
		c.flow.VLANs[0] = flow.VLAN{}
	}
	switch {
	case q.PeerBridge != "":
		c.patch(q)
	case q.Bundle != nil && q.Bundle.Bond != nil:
		if no, ok := c.bondOutput(q.Bundle, vlan); ok {
			if m := c.snap.ByODP[no]; m != nil {
				c.outputPort(m)
			}
		}
	case q.Tunnel != nil:
		c.mir.tunnelOutput(q)
	default:
		c.outputPort(q)
	}
	c.flow.VLANs[0] = save
}
