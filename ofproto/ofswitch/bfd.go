package ofswitch

import (
	"fmt"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/bfd"
	"github.com/gvs-project/gvs/ofproto/cfm"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// slowPath handles a packet of a slow-path megaflow
// (userspace(slow_path(bfd))): it is translated again, with the packet,
// and the BFD sessions it is a control packet for process it, as Open
// vSwitch's SLOW_PATH_UPCALL does through process_special; the rest of
// the translation's actions (a patch port's other outputs, say) run on a
// copy of it, as Open vSwitch executes them for each such upcall.
func (e *executor) slowPath(u *dpif.Upcall) {
	in := xlate.In{Key: *u.Key, Packet: u.Packet, SideEffects: true}
	var out xlate.Out
	e.xl.Translate(&in, &out)
	e.processCFM(u.Packet, out.CFM)
	e.processBFD(u.Packet, u.Key, out.BFD)
	e.processLACP(u.Packet, out.LACP)
	e.processSTP(u.Packet, out.STP) // stp.go
	e.processRSTP(u.Packet, out.RSTP)
	// This packet's packet-ins and learned flows come from this
	// translation (executeOnce leaves controller upcalls out of the
	// actions), as Open vSwitch handles a controller action in a
	// slow-path flow (debug_slow,controller; a rewrite of ARP fields).
	e.notify.sendPacketIns(out.PacketIns)
	e.up.ApplyLearned(out.Learned)
	if len(out.SlowActions) > 0 && u.Packet != nil {
		// The datapath still owns the upcall's packet.
		p := packet.FromBytes(u.Packet.Data())
		p.Md = u.Packet.Md
		e.executeOnce(p, out.SlowActions)
	}
}

// processBFD hands a received control packet to its sessions and tells
// the switch (Config.BFDProcessed) so that it can answer a poll at once
// and update the port's liveness.
func (e *executor) processBFD(p *packet.Packet, k *flow.Key, sessions []*bfd.Session) {
	if p == nil || len(sessions) == 0 {
		return
	}
	payload, _, ok := bfd.UDPPayload(p.Data())
	if !ok {
		return // no UDP payload: Open vSwitch ignores the packet
	}
	for _, s := range sessions {
		// The TTL is the flow's (after a tunnel's decapsulation, the
		// inner packet's), as Open vSwitch checks flow->nw_ttl.
		s.Process(k.NwTTL, payload)
		if e.bfdProcessed != nil {
			e.bfdProcessed(s)
		}
	}
}

// processCFM hands a received CCM to the maintenance points it is for.
func (e *executor) processCFM(p *packet.Packet, sessions []*cfm.Session) {
	if p == nil {
		return
	}
	for _, s := range sessions {
		s.Process(p.Data())
	}
}

// sendPacket sends a frame the switch itself originates (a BFD control
// packet) out of OpenFlow port ofport, as Open vSwitch's
// xlate_send_packet: translated as output:ofport from in_port NONE, so a
// tunnel port encapsulates it and a patch port delivers it to the peer
// bridge (whose BFD session, if the packet is for it, processes it
// directly). With oam (bfd:oam) the tunnel header carries the OAM flag
// (Open vSwitch's set_field:oam->tun_flags before the output). No
// megaflow is installed.
func (e *executor) sendPacket(ofport uint16, frame []byte, oam bool) error {
	pkt := packet.FromBytes(frame)
	pkt.Md.InPort = xlate.NoODP
	var in xlate.In
	flow.Extract(pkt, &in.Key)
	in.Key.InPort = xlate.NoODP
	in.Packet, in.SideEffects = pkt, true
	in.OFActions, in.InPort = []ofp.Action{{Type: ofp.ActOutput, Port: uint32(ofport)}}, xlate.PortNone
	if oam {
		// The pipeline's tunnel flags start with OAM, which a tunnel
		// output keeps (Open vSwitch sets it with set_field first).
		in.Key.TunFlags |= packet.TunFlagOAM
	}
	var out xlate.Out
	e.xl.Translate(&in, &out)
	e.up.Inject(out.Injects)
	if out.Err != nil {
		return fmt.Errorf("%s: sending on port %d: %w", e.name, ofport, out.Err)
	}
	// The packet counts where it goes (patch ports, a peer's
	// forwarding_if_rx), as Open vSwitch executes it with statistics.
	e.up.CreditPacket(&out, uint64(pkt.Len()))
	acts := out.Actions
	if out.SlowReason != 0 {
		e.processCFM(pkt, out.CFM) // a CCM sent into a patch port
		e.processBFD(pkt, &in.Key, out.BFD)
		e.processLACP(pkt, out.LACP) // a LACPDU sent into a patch port
		e.processSTP(pkt, out.STP)   // a BPDU sent into a patch port
		e.processRSTP(pkt, out.RSTP)
		acts = out.SlowActions
	}
	return e.executeOnce(pkt, acts)
}

// SendPacket sends a frame the switch itself originates (a BFD control
// packet) out of OpenFlow port ofport, translated as output:ofport from
// in_port NONE (see executor.sendPacket).
func (b *Bridge) SendPacket(ofport uint16, frame []byte, oam bool) error {
	return b.exec.sendPacket(ofport, frame, oam)
}
