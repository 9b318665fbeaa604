package ofswitch

import (
	"errors"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// packetOut runs a packet-out's actions on its packet, as Open vSwitch
// does: through translation (so resubmit, output:TABLE and every action
// work), then the datapath executes the result. There is no buffering:
// a buffer id other than OFP_NO_BUFFER is OFPBRC_BUFFER_UNKNOWN.
func (b *Bridge) packetOut(s ofconn.Sender, m *ofp.Msg, po *ofp.PacketOut) error {
	if err := b.checkWrite(s); err != nil {
		return err
	}
	p, err := b.preparePacketOut(m, po, nil)
	if err != nil {
		return err
	}
	return b.finishPacketOut(p)
}

// stagedView is what a packet-out inside a bundle sees: the flow tables
// at the bundle's staged version and its staged groups.
type stagedView struct {
	version uint64
	groups  map[uint32]*xlate.Group
}

// preparedPacketOut is a packet-out checked and translated, to be
// executed by finishPacketOut.
type preparedPacketOut struct {
	pkt *packet.Packet
	out xlate.Out
}

// preparePacketOut checks a packet-out and translates it, against the
// published tables and groups or, inside a bundle, against what the
// bundle staged before it (as Open vSwitch translates a bundled
// packet-out when the commit reaches it and executes it only once the
// whole bundle succeeded).
func (b *Bridge) preparePacketOut(m *ofp.Msg, po *ofp.PacketOut, sv *stagedView) (*preparedPacketOut, error) {
	if po.BufferID != ofp.BufferNone {
		return nil, &ofp.Error{Code: ofp.OFPBRC_BUFFER_UNKNOWN, Err: errors.New("gvs does not buffer packets")}
	}
	inPort := xlate.Port16(po.InPort)
	snap := b.xl.Snapshot()
	odpIn := uint32(xlate.NoODP)
	switch {
	case inPort == xlate.PortController || inPort == xlate.PortNone || inPort == xlate.PortLocal && snap.Ports[inPort] == nil:
	case snap.Ports[inPort] != nil:
		odpIn = snap.Ports[inPort].ODP
	case inPort >= xlate.PortMax:
		return nil, &ofp.Error{Code: ofp.OFPBRC_BAD_PORT}
	}
	decode := ofp.DecodeActions
	if b.cfg.DebugActions {
		decode = ofp.DecodeActionsWithDebug
	}
	acts, err := decode(po.Actions, m.Version)
	if err != nil {
		return nil, err
	}
	pkt := packet.FromBytes(po.Data)
	pkt.Md.InPort = odpIn
	var in xlate.In
	flow.Extract(pkt, &in.Key)
	in.Key.InPort = odpIn
	// The tunnel fields the message's match sets (OpenFlow 1.5
	// pipeline fields) are the packet's for the lookups, tun_metadata
	// in the layout of the bridge's TLV table.
	pm := po.Match
	if err := pm.Relayout(snap.TunMap); err != nil {
		return nil, &ofp.Error{Code: ofp.NXFMFC_INVALID_TLV_FIELD, Err: err}
	}
	copy(in.Key.W()[flow.SegMetaEnd:flow.SegTunnelEnd], pm.Flow.Key.W()[flow.SegMetaEnd:flow.SegTunnelEnd])
	// Actions are checked against the packet's own headers plus the
	// pipeline fields the message sets, as Open vSwitch does (an ARP
	// packet-out may set arp_spa although its match has no dl_type).
	if err := ofp.ValidateOfpactsVersion(m.Version, acts, packetMatch(&po.Match, &in.Key), 0xff00, 0, 255); err != nil {
		return nil, err
	}
	groups := b.xl.Groups()
	if sv != nil {
		groups = sv.groups
		in.Version, in.Groups, in.GroupsOf = sv.version, sv.groups, b.xl
	}
	// Groups and meters must exist (ofproto_check_ofpacts).
	if err := b.groups.checkGroupRefsIn(acts, groups); err != nil {
		return nil, err
	}
	in.Packet, in.SideEffects = pkt, true
	in.OFActions, in.InPort = acts, inPort
	in.Regs, in.Metadata = po.Match.Flow.Regs, po.Match.Flow.Metadata
	p := &preparedPacketOut{pkt: pkt}
	b.xl.Translate(&in, &p.out)
	return p, nil
}

// finishPacketOut sends a prepared packet-out's packet-ins and executes
// its actions.
func (b *Bridge) finishPacketOut(p *preparedPacketOut) error {
	b.notify.sendPacketIns(p.out.PacketIns)
	if p.out.Err != nil {
		return &ofp.Error{Code: ofp.OFPBRC_EPERM, Err: p.out.Err}
	}
	// The rules the packet went through count it, as in Open vSwitch.
	b.up.CreditPacket(&p.out, uint64(p.pkt.Len()))
	return b.executeOnce(p.pkt, p.out.Actions)
}

// executeOnce runs a one-off translation's actions on its packet. The
// translation already made the packet-ins, so the controller actions'
// userspace upcalls are left out: executed, they would make them again
// (and a paused one, translated from the start, would pause at the
// first pause again, and again).
func (b *Bridge) executeOnce(pkt *packet.Packet, acts odp.Actions) error {
	acts = withoutControllerUpcalls(acts)
	if b.cfg.DP == nil || len(acts) == 0 {
		return nil
	}
	return b.cfg.DP.Execute(pkt, acts)
}

// withoutControllerUpcalls returns acts without the userspace actions
// of controller actions (nested ones included), copying only if needed.
func withoutControllerUpcalls(acts odp.Actions) odp.Actions {
	var out odp.Actions
	for i, a := range acts {
		keep := !(a.Kind == odp.KindUserspace && a.Userspace != nil && xlate.IsControllerCookie(a.Userspace.Userdata))
		if keep && (len(a.Sub) > 0 || len(a.Sub2) > 0) {
			a.Sub, a.Sub2 = withoutControllerUpcalls(a.Sub), withoutControllerUpcalls(a.Sub2)
		}
		if out == nil && (!keep || len(a.Sub) != len(acts[i].Sub) || len(a.Sub2) != len(acts[i].Sub2)) {
			out = append(odp.Actions{}, acts[:i]...)
		}
		if out != nil && keep {
			out = append(out, a)
		}
	}
	if out == nil {
		return acts
	}
	return out
}

// resume continues a paused translation (NXT_RESUME) with the packet and
// pipeline fields the controller sent back.
func (b *Bridge) resume(s ofconn.Sender, r *resumeMsg) error {
	if err := b.checkWrite(s); err != nil {
		return err
	}
	ct, err := b.notify.decodeContinuation(r.Continuation, r.Version)
	if err != nil {
		return &ofp.Error{Code: ofp.NXR_STALE, Err: err}
	}
	inPort := uint16(r.Match.Flow.InPort)
	snap := b.xl.Snapshot()
	odpIn := uint32(xlate.NoODP)
	if p := snap.Ports[inPort]; p != nil {
		odpIn = p.ODP
	}
	pkt := packet.FromBytes(r.Data)
	pkt.Md.InPort = odpIn
	in := xlate.In{Packet: pkt, SideEffects: true, Resume: ct, InPort: inPort,
		Regs: r.Match.Flow.Regs, Metadata: r.Match.Flow.Metadata}
	flow.Extract(pkt, &in.Key)
	in.Key.InPort = odpIn
	var out xlate.Out
	b.xl.Translate(&in, &out)
	b.notify.sendPacketIns(out.PacketIns)
	b.up.ApplyLearned(out.Learned)
	if out.Err != nil {
		return &ofp.Error{Code: ofp.NXR_STALE, Err: out.Err}
	}
	// The rules the resumed pipeline went through count the packet.
	b.up.CreditPacket(&out, uint64(pkt.Len()))
	return b.executeOnce(pkt, out.Actions)
}

// resumeMsg is an NXT_RESUME with the version it came in (its
// continuation's actions are encoded in that version).
type resumeMsg struct {
	*ofp.Resume
	Version uint8
}

// packetMatch is meta (a packet-out's pipeline fields) with every header
// field of the packet with key k matched exactly.
func packetMatch(meta *mf.Match, k *flow.Key) *mf.Match {
	m := *meta
	in, min := m.Flow.InPort, m.Mask.InPort
	m.Flow.Key = *k
	m.Flow.InPort, m.Mask.InPort = in, min
	w := &m.Mask.Key
	w.EthSrc = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	w.EthDst = w.EthSrc
	w.EthType = 0xffff
	for i := range w.VLANs {
		w.VLANs[i].TCI, w.VLANs[i].TPID = 0xffff, 0xffff
	}
	flow.MarkL3L4(w, k)
	return &m
}
