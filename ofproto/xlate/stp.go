package xlate

import (
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/stp"
)

// SetSpanningTree says whether the bridge runs the spanning tree
// (Bridge.stp_enable): BPDUs received on any of its ports are then the
// switch's, never the pipeline's, and ports with an stp.Port (Port.STP)
// forward and learn as their state allows (Open vSwitch's xport_stp_*).
func (x *Xlator) SetSpanningTree(on bool) { x.stp.Store(on) }

// SetRapidSpanningTree is SetSpanningTree for RSTP (Bridge.rstp_enable,
// Port.RSTP, Open vSwitch's xport_rstp_*).
func (x *Xlator) SetRapidSpanningTree(on bool) { x.rstp.Store(on) }

// isBPDU is Open vSwitch's is_stp: an 802.2 frame to the Bridge Group
// Address.
func isBPDU(k *flow.Key) bool { return k.EthType == flow.EthTypeNone && k.EthDst == stp.Addr }

// stpSpecial takes a BPDU received on port p of a bridge running the
// spanning tree (STP before RSTP, as Open vSwitch): the port's tree
// processes it (a port outside the tree sinks it).
func (c *ctx) stpSpecial(p *Port) bool {
	useSTP, useRSTP := c.x.stp.Load(), c.x.rstp.Load()
	if !useSTP && !useRSTP {
		return false
	}
	c.wc.Key.EthDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if !isBPDU(&c.flow.Key) {
		return false
	}
	switch {
	case useSTP:
		if p.STP != nil && p.STP.State() != stp.Disabled {
			c.out.STP = append(c.out.STP, p.STP)
		}
	case p.RSTP != nil:
		c.out.RSTP = append(c.out.RSTP, p.RSTP)
	}
	c.out.SlowReason |= odp.SlowSTP
	return true
}

// stpForwards reports whether port p forwards what it receives (a port
// outside the trees does).
func stpForwards(p *Port) bool {
	return p == nil || (p.STP == nil || p.STP.State().Forwards()) && (p.RSTP == nil || p.RSTP.State().Forwards())
}

// stpMayReceive is the spanning trees' half of Open vSwitch's
// may_receive: a port that neither forwards nor learns drops what it
// receives before the pipeline.
func stpMayReceive(p *Port) bool {
	if p == nil {
		return true
	}
	if p.STP != nil && !p.STP.State().Forwards() && !p.STP.State().Learns() {
		return false
	}
	return p.RSTP == nil || p.RSTP.State().Forwards() || p.RSTP.State().Learns()
}

// stpSkipOutput reports (and traces) whether a spanning tree keeps the
// packet from going out of port p: a BPDU goes out of an STP port not
// blocking or an RSTP port that manages BPDUs, CFM and BFD control
// packets of the port go out whatever its state, anything else only out
// of a forwarding port.
func (c *ctx) stpSkipOutput(p *Port) bool {
	if p.STP == nil && p.RSTP == nil {
		return false
	}
	if isBPDU(&c.in.Key) {
		stpOK := p.STP == nil || p.STP.State().ForwardsBPDU()
		rstpOK := p.RSTP != nil && p.RSTP.State().ManagesBPDU()
		if stpOK || rstpOK {
			return false
		}
		if c.x.stp.Load() {
			c.tr.skipf("STP not in listening state, skipping bpdu output")
		} else {
			c.tr.skipf("RSTP not managing BPDU in this state, skipping bpdu output")
		}
		return true
	}
	if stpForwards(p) || c.healthPacket(p) {
		return false
	}
	if c.x.stp.Load() {
		c.tr.skipf("STP not in forwarding state, skipping output")
	} else {
		c.tr.skipf("RSTP not in forwarding state, skipping output")
	}
	return true
}

// healthPacket reports whether the packet is a CFM or BFD control packet
// of port p (the spanning tree does not block link health detection).
func (c *ctx) healthPacket(p *Port) bool {
	k := &c.flow.Key
	if p.CFM != nil && k.EthType == 0x8902 {
		return true
	}
	return p.BFD != nil && k.NwProto == flow.IPProtoUDP && (k.TpDst == 3784 || k.TpDst == 4784)
}

// stpInputBlocked drops, after the pipeline, what a packet from a port
// that learns but does not forward made: only NORMAL's learning stays
// (its mac_learn action, whose output ports normal() emptied).
func (c *ctx) stpInputBlocked(in *Port) {
	if stpForwards(in) {
		return
	}
	kept := c.out.Actions[:0]
	for _, a := range c.out.Actions {
		if a.Kind == odp.KindMACLearn {
			kept = append(kept, a)
		}
	}
	c.out.Actions = kept
	c.out.PacketIns = nil
}
