package ofswitch

import (
	"crypto/sha256"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/connmgr"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/upcall"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// Port status reasons (OFPPR_*).
const (
	reasonAdd    = 0
	reasonDelete = 1
	reasonModify = 2
)

// notifier sends the bridge's asynchronous messages to its OpenFlow
// connections, each as the connection's asynchronous configuration asks
// (Open vSwitch's connmgr_send_* functions): packet-ins (and their
// continuations, which name the bridge), port status, flow removed (and
// the deletes of delete_learned that follow), request forwarding. It
// also keeps the translator told whether table misses make packet-ins
// (updateMissPacketIn) and counts the packet-ins sent.
type notifier struct {
	// cookies are the learned cookies whose flows go after a commit.
	cookies *learnedCookies
	name    string
	conns   *connmgr.Manager[connExt]
	xl      *xlate.Xlator
	recirc  *xlate.RecircTable
	tables  *oftable.Tables
	// up is told of translation changes.
	up           *upcall.Handler
	logf, debugf func(format string, args ...any)
	packetIns    atomic.Uint64
}

type portEvent struct {
	reason uint8
	port   Port
	// readd: an ADD of a port deleted a moment ago with the same name
	// and number (its interface's options changed, which Open vSwitch
	// applies in place): announced with its state at once.
	readd bool
}

// defaultAsync is Open vSwitch's asynchronous message configuration for a
// connection of version v that never set one (ofputil_async_cfg_default):
// packet-ins for every reason but invalid TTL, explicit misses (a
// controller action in a table-miss flow) and, before OpenFlow 1.3,
// implicit misses; port status to everyone; flow removed with the
// version's reasons; no role status, table status or request
// forwarding until asked for.
func defaultAsync(v uint8) ofp.AsyncConfig {
	ac := ofp.DefaultAsyncConfig(v)
	ac.Present = 0
	ac.Master[ofp.AsyncPacketIn] |= 1 << xlate.ReasonExplicitMiss
	if v < mf.OF13 {
		ac.Master[ofp.AsyncPacketIn] |= 1 << xlate.ReasonImplicitMiss
	}
	return ac
}

// wants reports whether a connection wants an asynchronous message of
// kind with the given reason (packet-in reasons are the internal ones:
// xlate.ReasonExplicitMiss and ReasonImplicitMiss have their own bits).
func wants(s ofconn.Sender, st *connState, kind int, reason uint8) bool {
	if !st.Primary && st.MissSendLen.Load() == 0 {
		// Service connections must ask for asynchronous messages by
		// setting a miss_send_len, as in Open vSwitch.
		return false
	}
	ac := asyncConfig(st, s.Version())
	mask := ac.Master[kind]
	if s.State().Role() == ofconn.RoleSlave {
		mask = ac.Slave[kind]
	}
	return mask&(1<<reason) != 0
}

// asyncConfig returns the connection's configuration or the default for
// its version.
func asyncConfig(st *connState, v uint8) ofp.AsyncConfig {
	if ac := st.Async.Load(); ac != nil {
		return *ac
	}
	return defaultAsync(v)
}

// wireReason is the packet-in reason version v puts on the wire for an
// internal reason, as Open vSwitch's encode_packet_in_reason: the
// OpenFlow 1.4 refinements of "action" are "action" before 1.4, an
// explicit miss is "action" before 1.3, an implicit miss "no_match".
func wireReason(r uint8, v uint8) uint8 {
	switch {
	case r == xlate.ReasonImplicitMiss:
		return ofp.ReasonNoMatch
	case r == xlate.ReasonExplicitMiss && v < mf.OF13:
		return ofp.ReasonAction
	case r == xlate.ReasonExplicitMiss:
		return ofp.ReasonNoMatch
	case r >= 3 && v < mf.OF14:
		return ofp.ReasonAction
	}
	return r
}

// addMissBits gives a packet-in mask set from the wire the internal bits
// its bits stand for: no_match the miss reasons
// (ofputil_decode_set_async_config) and, before OpenFlow 1.4, action its
// 1.4 refinements action_set, group and packet_out
// (ofconn_set_async_config).
func addMissBits(mask uint32, v uint8) uint32 {
	if mask&(1<<ofp.ReasonNoMatch) != 0 {
		mask |= 1 << xlate.ReasonExplicitMiss
		if v < mf.OF13 {
			mask |= 1 << xlate.ReasonImplicitMiss
		}
	}
	if v < mf.OF14 && mask&(1<<ofp.ReasonAction) != 0 {
		mask |= 1<<xlate.ReasonActionSet | 1<<xlate.ReasonGroup | 1<<xlate.ReasonPacketOut
	}
	return mask
}

// pipelineMatch is the metadata of a packet-in: in_port and every
// non-zero pipeline field, as Open vSwitch's flow_get_metadata; the
// tun_metadata fields present are laid out by the bridge's TLV table tm.
func pipelineMatch(fl *mf.Flow, tm *mf.TunMap) mf.Match {
	m := matchInPort(uint16(fl.InPort))
	if present := fl.TunMetaPresent; present != 0 && tm != nil {
		m.Tun = *tm
		for i, loc := range tm.Opts {
			if present&(1<<i) == 0 || loc.Len == 0 {
				continue
			}
			copy(m.Flow.TunMeta[loc.Off:loc.Off+loc.Len], fl.TunMeta[loc.Off:loc.Off+loc.Len])
			for j := loc.Off; j < loc.Off+loc.Len; j++ {
				m.Mask.TunMeta[j] = 0xff
			}
			m.Flow.TunMetaPresent |= 1 << i
			m.Mask.TunMetaPresent |= 1 << i
		}
	}
	set := func(name string, nonzero bool) {
		if !nonzero {
			return
		}
		f := mf.ByName(name)
		if f == nil {
			return
		}
		v := make([]byte, f.Bytes)
		f.Get(fl, v)
		_ = m.SetMasked(f, v, nil)
	}
	k := &fl.Key
	set("tun_id", k.TunID != 0)
	set("tun_flags", k.TunFlags&1 != 0) // the public flag, OAM
	set("tun_src", k.TunSrc != 0)
	set("tun_dst", k.TunDst != 0)
	set("tun_ipv6_src", k.TunIPv6Src != [16]byte{})
	set("tun_ipv6_dst", k.TunIPv6Dst != [16]byte{})
	set("tun_gbp_id", k.TunGbpID != 0)
	set("tun_gbp_flags", k.TunGbpFlags != 0)
	set("metadata", fl.Metadata != 0)
	for i, r := range fl.Regs {
		set(fmt.Sprintf("reg%d", i), r != 0)
	}
	set("pkt_mark", k.PktMark != 0)
	if k.CtState != 0 {
		set("ct_state", true)
		// The Ethertype too: the conntrack fields mean nothing without it.
		set("eth_type", true)
		const valid = flow.CsNew | flow.CsEstablished | flow.CsReplyDir
		if k.CtState&valid != 0 && k.CtNwProto != 0 {
			v4, v6 := k.EthType == flow.EthTypeIPv4, k.EthType == flow.EthTypeIPv6
			set("ct_nw_src", v4)
			set("ct_nw_dst", v4)
			set("ct_ipv6_src", v6)
			set("ct_ipv6_dst", v6)
			set("ct_nw_proto", v4 || v6)
			set("ct_tp_src", v4 || v6)
			set("ct_tp_dst", v4 || v6)
		}
	}
	set("ct_zone", k.CtZone != 0)
	set("ct_mark", k.CtMark != 0)
	set("ct_label", k.CtLabel != [16]byte{})
	return m
}

// sendPacketIns delivers packet-ins to the connections that want them.
func (n *notifier) sendPacketIns(pis []xlate.PacketIn) {
	for i := range pis {
		pi := &pis[i]
		if pi.Bridge != "" && pi.Bridge != n.name {
			// Made in a patch peer's pipeline: its controllers get it.
			if x := n.recirc.Bridge(pi.Bridge); x != nil && x != n.xl && x.Owner != nil {
				x.Owner.SendPacketIns(pis[i : i+1])
			}
			continue
		}
		n.packetIns.Add(1)
		tm := n.xl.Snapshot().TunMap
		n.conns.Each(func(st *connState) {
			s := st.Sender
			if uint16(st.ControllerID.Load()) != pi.ControllerID || !wants(s, st, ofp.AsyncPacketIn, pi.Reason) {
				return
			}
			msg := &ofp.PacketIn{
				Format: uint8(s.State().PacketInFormat()), BufferID: ofp.BufferNone,
				TotalLen: uint16(len(pi.Data)), Reason: wireReason(pi.Reason, s.Version()), TableID: pi.TableID, Cookie: pi.Cookie,
				Match: pipelineMatch(&pi.Flow, tm), Data: pi.Data, Userdata: pi.Userdata,
			}
			if pi.Continuation != nil {
				cont, err := n.encodeContinuation(pi.Continuation, s.Version())
				if err != nil {
					n.logf("%s: continuation: %v", n.name, err)
					return
				}
				msg.Continuation = cont
			}
			maxLen := int(pi.MaxLen)
			if maxLen != 0xffff && len(msg.Data) > maxLen {
				msg.Data = msg.Data[:maxLen]
			}
			send := func() {
				if err := s.Send(0, msg); err != nil {
					n.debugf("%s: packet-in: %v", n.name, err)
				}
			}
			miss := pi.Reason == ofp.ReasonNoMatch || pi.Reason == xlate.ReasonExplicitMiss || pi.Reason == xlate.ReasonImplicitMiss
			n.conns.SendPacketIn(st, pi.Flow.InPort, miss, send)
		})
	}
}

// sendPortStatus announces port changes.
func (n *notifier) sendPortStatus(events []portEvent) {
	for _, ev := range events {
		n.conns.Each(func(st *connState) {
			s := st.Sender
			n.sendPortStatusTo(s, st, ev)
		})
	}
}

// sendPortStatusTo sends one port-status to one connection if it wants it.
func (n *notifier) sendPortStatusTo(s ofconn.Sender, st *connState, ev portEvent) {
	if !wants(s, st, ofp.AsyncPortStatus, ev.reason) {
		return
	}
	p := ofpPort(&ev.port, s.Version())
	p.PortNo = ofp.PortToOF11(ev.port.OFPort)
	if ev.reason == reasonAdd && p.State&4 != 0 && !ev.readd {
		// Open vSwitch installs a port before it may be enabled: the
		// ADD says it is not live, a MOD then that it is.
		add := p
		add.State &^= 4
		s.Send(0, &ofp.PortStatus{Reason: reasonAdd, Desc: add})
		if wants(s, st, ofp.AsyncPortStatus, reasonModify) {
			s.Send(0, &ofp.PortStatus{Reason: reasonModify, Desc: p})
		}
		return
	}
	s.Send(0, &ofp.PortStatus{Reason: ev.reason, Desc: p})
}

// sendTableStatus sends a vacancy event to the OpenFlow 1.4+ connections
// whose asynchronous configuration asks for its reason.
func (n *notifier) sendTableStatus(m *ofp.TableStatus) {
	n.conns.Each(func(st *connState) {
		s := st.Sender
		if s.Version() >= mf.OF14 && wants(s, st, ofp.AsyncTableStatus, m.Reason) {
			s.Send(0, m)
		}
	})
}

// sendFlowRemoved sends flow_removed for removed rules that asked for it
// (and deletes what removed learning flows learned with delete_learned).
func (n *notifier) sendFlowRemoved(rs []oftable.Removal) {
	defer n.deleteLearned(rs)
	if len(rs) == 0 {
		return
	}
	now := time.Now()
	for _, rm := range rs {
		r := rm.Rule
		if r.Flags&oftable.FlagSendFlowRem == 0 {
			continue
		}
		d := now.Sub(r.CreatedAt()).Truncate(time.Millisecond)
		n.conns.Each(func(st *connState) {
			s := st.Sender
			if !wants(s, st, ofp.AsyncFlowRemoved, uint8(rm.Reason)) {
				return
			}
			format := ofp.FormatOXM
			if s.Version() == 1 {
				format = ofp.FormatOF10
				if st.FlowFormat.Load() == ofp.NXFFNXM {
					format = ofp.FormatNXM
				}
			}
			idleTO, hardTO := r.Timeouts()
			s.Send(0, &ofp.FlowRemoved{
				Format: format, Cookie: r.Cookie, Priority: r.Priority, Reason: uint8(rm.Reason), TableID: r.Table,
				DurationSec: uint32(d / time.Second), DurationNsec: uint32(d % time.Second),
				IdleTimeout: idleTO, HardTimeout: hardTO,
				PacketCount: r.Stats.Packets.Load(), ByteCount: r.Stats.Bytes.Load(), Match: r.Match(),
			})
		})
	}
}

// bridgeUUID is the bridge id a continuation carries: derived from the
// bridge name, so that a resume reaches the bridge that paused.
func bridgeUUID(name string) [16]byte {
	sum := sha256.Sum256([]byte("gvs-bridge:" + name))
	var u [16]byte
	copy(u[:], sum[:16])
	return u
}

// encodeContinuation encodes a paused translation for a connection of
// version v.
func (n *notifier) encodeContinuation(ct *xlate.Continuation, v uint8) ([]byte, error) {
	p := &ofp.PacketInPrivate{Bridge: bridgeUUID(ct.Bridge), Stack: ct.Stack, ODPPort: ct.ODPPort, ActionSet: ct.ActionSet, Mirrors: ct.Mirrors}
	for _, f := range ct.Frames {
		p.Groups = append(p.Groups, ofp.ContinuationGroup{TableID: f.Table, Cookie: f.Cookie, Actions: f.Actions})
	}
	return ofp.AppendContinuation(nil, p, v)
}

// decodeContinuation finds the paused translation an NXT_RESUME names.
func (n *notifier) decodeContinuation(raw []byte, v uint8) (*xlate.Continuation, error) {
	p, err := ofp.DecodeContinuation(raw, v)
	if err != nil {
		return nil, err
	}
	name := ""
	if p.Bridge == bridgeUUID(n.name) {
		name = n.name
	} else {
		for _, pb := range n.recirc.Bridges() {
			if p.Bridge == bridgeUUID(pb) {
				name = pb
			}
		}
	}
	if name == "" {
		return nil, xlate.ErrBadContinuation
	}
	ct := &xlate.Continuation{Bridge: name, Stack: p.Stack, ODPPort: p.ODPPort, ActionSet: p.ActionSet, Mirrors: p.Mirrors}
	for _, g := range p.Groups {
		ct.Frames = append(ct.Frames, xlate.ContinuationFrame{Table: g.TableID, Cookie: g.Cookie, Actions: g.Actions})
	}
	return ct, nil
}

// deleteLearned deletes the flows of the cookies that no rule learns into
// with delete_learned any more (Open vSwitch's learned_cookies_flush).
func (n *notifier) deleteLearned(rs []oftable.Removal) {
	if n.cookies == nil || !n.cookies.on.Load() {
		return
	}
	fms := n.cookies.takeDead()
	if len(fms) == 0 {
		return
	}
	x := n.tables.Begin()
	for _, fm := range fms {
		x.Apply(fm)
	}
	n.sendFlowRemoved(x.Commit())
}

// updateMissPacketIn recomputes whether table misses send packet-ins:
// they do while a connection of OpenFlow 1.0 to 1.2 with controller id 0
// is open (Open vSwitch's want_packet_in_on_miss). A change revalidates
// the megaflows, which may hold table misses.
func (n *notifier) updateMissPacketIn() {
	want := false
	n.conns.Each(func(st *connState) {
		s := st.Sender
		if st.ControllerID.Load() == 0 && s.Version() < mf.OF13 {
			want = true
		}
	})
	if n.xl.SetMissPacketIn(want) {
		n.up.Changed()
	}
}
