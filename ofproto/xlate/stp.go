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

// isBPDU is Open vSwitch's is_stp: an 802.2 frame to the Bridge Group
// Address.
func isBPDU(k *flow.Key) bool { return k.EthType == flow.EthTypeNone && k.EthDst == stp.Addr }

// stpSpecial takes a BPDU received on port p of a bridge running the
// spanning tree: the port's STP processes it (a port outside the tree
// sinks it).
func (c *ctx) stpSpecial(p *Port) bool {
	if !c.x.stp.Load() {
		return false
	}
	c.wc.Key.EthDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if !isBPDU(&c.flow.Key) {
		return false
	}
	if p.STP != nil && p.STP.State() != stp.Disabled {
		c.out.STP = append(c.out.STP, p.STP)
	}
	c.out.SlowReason |= odp.SlowSTP
	return true
}

// stpForwards reports whether port p forwards what it receives (a port
// outside the tree does).
func stpForwards(p *Port) bool { return p == nil || p.STP == nil || p.STP.State().Forwards() }

// stpLearns reports whether port p learns from what it receives.
func stpLearns(p *Port) bool { return p == nil || p.STP == nil || p.STP.State().Learns() }

// stpMayReceive is the spanning tree's half of Open vSwitch's
// may_receive: a port that neither forwards nor learns drops what it
// receives before the pipeline.
func stpMayReceive(p *Port) bool { return stpForwards(p) || stpLearns(p) }

// stpSkipOutput reports (and traces) whether the spanning tree keeps the
// packet from going out of port p: a BPDU goes out of any port not
// blocking, CFM and BFD control packets of the port go out whatever its
// state, anything else only out of a forwarding port.
func (c *ctx) stpSkipOutput(p *Port) bool {
	if p.STP == nil {
		return false
	}
	st := p.STP.State()
	if isBPDU(&c.in.Key) {
		if st.ForwardsBPDU() {
			return false
		}
		c.tr.skipf("STP not in listening state, skipping bpdu output")
		return true
	}
	if st.Forwards() || c.healthPacket(p) {
		return false
	}
	c.tr.skipf("STP not in forwarding state, skipping output")
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
