package ofswitch

import (
	"errors"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/bfd"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/upcall"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// executor runs packets through the bridge's pipeline outside the
// datapath's upcalls: packet-outs (alone or in a bundle), resumed
// continuations (NXT_RESUME), slow-path upcalls (BFD control packets) and
// the packets the switch itself sends (BFD). Each is translated with side
// effects, its packet-ins sent, the rules it went through credited, and
// its actions executed once on the datapath.
type executor struct {
	name string
	// dp executes the actions; nil: nothing is executed.
	dp dpif.Datapath
	xl *xlate.Xlator
	// up credits the rules a packet went through, applies learned flows
	// and injects packets into peer bridges.
	up     *upcall.Handler
	groups *groupTable
	notify *notifier
	// debugActions, bfdProcessed and lacpProcessed are
	// Config.DebugActions, Config.BFDProcessed and Config.LACPProcessed.
	debugActions  bool
	bfdProcessed  func(*bfd.Session)
	lacpProcessed func()
	stpProcessed  func() // Config.STPProcessed
}

// packetOut runs a packet-out's actions on its packet, as Open vSwitch
// does: through translation (so resubmit, output:TABLE and every action
// work), then the datapath executes the result. There is no buffering:
// a buffer id other than OFP_NO_BUFFER is OFPBRC_BUFFER_UNKNOWN.
func (e *executor) packetOut(m *ofp.Msg, po *ofp.PacketOut) error {
	p, err := e.prepare(m, po, nil)
	if err != nil {
		return err
	}
	return e.finish(p)
}

// stagedView is what a packet-out inside a bundle sees: the flow tables
// at the bundle's staged version and its staged groups.
type stagedView struct {
	version uint64
	groups  map[uint32]*xlate.Group
}

// preparedPacketOut is a packet-out checked and translated, to be
// executed by finish.
type preparedPacketOut struct {
	pkt *packet.Packet
	out xlate.Out
}

// prepare checks a packet-out and translates it, against the
// published tables and groups or, inside a bundle, against what the
// bundle staged before it (as Open vSwitch translates a bundled
// packet-out when the commit reaches it and executes it only once the
// whole bundle succeeded).
func (e *executor) prepare(m *ofp.Msg, po *ofp.PacketOut, sv *stagedView) (*preparedPacketOut, error) {
	if po.BufferID != ofp.BufferNone {
		return nil, &ofp.Error{Code: ofp.OFPBRC_BUFFER_UNKNOWN, Err: errors.New("gvs does not buffer packets")}
	}
	inPort := xlate.Port16(po.InPort)
	snap := e.xl.Snapshot()
	odpIn := uint32(xlate.NoODP)
	switch {
	case inPort == xlate.PortController || inPort == xlate.PortNone || inPort == xlate.PortLocal && snap.Ports[inPort] == nil:
	case snap.Ports[inPort] != nil:
		odpIn = snap.Ports[inPort].ODP
	case inPort >= xlate.PortMax:
		return nil, &ofp.Error{Code: ofp.OFPBRC_BAD_PORT}
	}
	decode := ofp.DecodeActions
	if e.debugActions {
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
	groups := e.xl.Groups()
	if sv != nil {
		groups = sv.groups
		in.Version, in.Groups, in.GroupsOf = sv.version, sv.groups, e.xl
	}
	// Groups and meters must exist (ofproto_check_ofpacts).
	if err := e.groups.checkGroupRefsIn(acts, groups); err != nil {
		return nil, err
	}
	in.Packet, in.SideEffects = pkt, true
	in.OFActions, in.InPort = acts, inPort
	in.Regs, in.Metadata = po.Match.Flow.Regs, po.Match.Flow.Metadata
	p := &preparedPacketOut{pkt: pkt}
	e.xl.Translate(&in, &p.out)
	return p, nil
}

// finish sends a prepared packet-out's packet-ins and executes
// its actions.
func (e *executor) finish(p *preparedPacketOut) error {
	e.notify.sendPacketIns(p.out.PacketIns)
	if p.out.Err != nil {
		return &ofp.Error{Code: ofp.OFPBRC_EPERM, Err: p.out.Err}
	}
	// The rules the packet went through count it, as in Open vSwitch.
	e.up.CreditPacket(&p.out, uint64(p.pkt.Len()))
	return e.executeOnce(p.pkt, p.out.Actions)
}

// executeOnce runs a one-off translation's actions on its packet. The
// translation already made the packet-ins, so the controller actions'
// userspace upcalls are left out: executed, they would make them again
// (and a paused one, translated from the start, would pause at the
// first pause again, and again).
func (e *executor) executeOnce(pkt *packet.Packet, acts odp.Actions) error {
	acts = withoutControllerUpcalls(acts)
	if e.dp == nil || len(acts) == 0 {
		return nil
	}
	return e.dp.Execute(pkt, acts)
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
func (e *executor) resume(r *resumeMsg) error {
	ct, err := e.notify.decodeContinuation(r.Continuation, r.Version)
	if err != nil {
		return &ofp.Error{Code: ofp.NXR_STALE, Err: err}
	}
	inPort := uint16(r.Match.Flow.InPort)
	snap := e.xl.Snapshot()
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
	e.xl.Translate(&in, &out)
	e.notify.sendPacketIns(out.PacketIns)
	e.up.ApplyLearned(out.Learned)
	if out.Err != nil {
		return &ofp.Error{Code: ofp.NXR_STALE, Err: out.Err}
	}
	// The rules the resumed pipeline went through count the packet.
	e.up.CreditPacket(&out, uint64(pkt.Len()))
	return e.executeOnce(pkt, out.Actions)
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
