package ofswitch

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// TraceInput is what ofproto/trace traces: a flow (in_port an OpenFlow
// port) and optionally the packet's bytes.
type TraceInput struct {
	Flow   mf.Flow
	Packet []byte
	// ODPKey, if not nil, is a datapath flow to trace instead of Flow
	// (ofproto/trace dp_name odp_flow).
	ODPKey *flow.Key
	// Actions, if not nil, are traced as a packet-out's actions instead
	// of the flow tables (ofproto/trace-packet-out).
	Actions []ofp.Action
	// CtNext are the conntrack states the recirculations after ct()
	// resume with, in order (--ct-next); once used up, trk|new.
	CtNext []uint8
}

// ParseTraceActions reads ofproto/trace-packet-out's actions argument in
// ovs-ofctl syntax, checked against the traced flow fl (every header field
// exact, as Open vSwitch checks a packet-out's actions against its packet).
func ParseTraceActions(s string, fl *mf.Flow) ([]ofp.Action, error) {
	meta := mf.Match{}
	meta.Flow.InPort, meta.Mask.InPort = fl.InPort, 0xffff
	return ofptext.ParseActionsFor(s, packetMatch(&meta, &fl.Key))
}

// ParseTraceFlow reads ofproto/trace's flow argument in ovs-ofctl match
// syntax ("in_port=1,tcp,nw_dst=10.0.0.2,tp_dst=80"); fields not given
// are zero, as Open vSwitch's trace does.
func ParseTraceFlow(s string) (mf.Flow, error) {
	if !strings.Contains(s, "actions=") {
		s += ",actions=drop"
	}
	f, err := ofptext.ParseFlow(s, mf.OF10)
	if err != nil {
		return mf.Flow{}, err
	}
	return f.Match.Flow, nil
}

// Trace translates in through the bridge without side effects and
// returns Open vSwitch's ofproto/trace report: the flow, every table and
// action, the final flow, the megaflow and the datapath actions.
func (b *Bridge) Trace(in TraceInput) string { return b.tracer.trace(in) }

// tracer writes ofproto/trace reports for one bridge: it translates
// without side effects, prints each step, and follows the
// recirculations conntrack makes (--ct-next, simulated NAT).
type tracer struct {
	name   string
	xl     *xlate.Xlator
	recirc *xlate.RecircTable
	// learn applies the flows a traced packet's learn actions make: a
	// trace with a packet (-generate, or one given) has that side
	// effect, as Open vSwitch's (allow_side_effects with a packet).
	learn func([]xlate.LearnedFlow)
}

// trace is Bridge.Trace.
func (tr *tracer) trace(in TraceInput) string {
	snap := tr.xl.Snapshot()
	fl := in.Flow
	key := fl.Key
	odpIn := uint32(xlate.NoODP)
	if p := snap.Ports[uint16(fl.InPort)]; p != nil {
		odpIn = p.ODP
	}
	if in.ODPKey != nil {
		key = *in.ODPKey
		odpIn = key.InPort
		fl = mf.Flow{Key: key}
		fl.InPort = uint32(xlate.PortNone)
		if p := snap.ByODP[key.InPort]; p != nil {
			fl.InPort = uint32(p.OFPort)
		} else if p := snap.TunnelReceive(&key); p != nil {
			fl.InPort = uint32(p.OFPort)
		}
	}
	var pkt *packet.Packet
	if in.Packet != nil {
		// The packet gives the headers; the flow it came with keeps the
		// metadata and tunnel fields (recirc_id, ct_*, marks) and the
		// in_port, as in Open vSwitch's ofproto/trace -generate.
		meta, inPort := key, fl.InPort
		pkt = packet.FromBytes(in.Packet)
		pkt.Md.InPort = odpIn
		flow.Extract(pkt, &key)
		copy(key.W()[:flow.SegTunnelEnd], meta.W()[:flow.SegTunnelEnd])
		fl.Key = key
		fl.InPort = inPort
	}
	key.InPort = odpIn
	var sb strings.Builder
	var queue []*xlate.TraceEvent
	tr.passActions(&sb, fl, key, pkt, &queue, 0, in.Actions)
	// Follow the recirculations ct() made, as Open vSwitch does, with
	// the --ct-next states in turn, then ct_state=trk|new, and NAT
	// simulated as translating to the first address and port of the
	// range. Bounded: each pass is a fresh translation that may queue
	// more.
	ctNext := in.CtNext
	for n := 0; n < len(queue) && n < maxTracePasses; n++ {
		ev := queue[n]
		rfl := *ev.Flow
		rfl.Key.RecircID = ev.RecircID
		rfl.Key.CtZone = ev.Ct.Zone
		// ct_mark and ct_label are the flow's at the freeze, with the
		// nested actions' writes (xlate), as Open vSwitch's recirc node.
		clearCtTuple(&rfl.Key)
		sb.WriteString("\n\n" + strings.Repeat("=", 79) + "\n")
		if len(ctNext) > 0 {
			rfl.Key.CtState, ctNext = ctNext[0], ctNext[1:]
			fmt.Fprintf(&sb, "recirc(%#x) - resume conntrack with ct_state=%s\n", ev.RecircID, flow.FormatCtState(rfl.Key.CtState))
		} else {
			rfl.Key.CtState = flow.CsTracked | flow.CsNew
			fmt.Fprintf(&sb, "recirc(%#x) - resume conntrack with default ct_state=trk|new (use --ct-next to customize)\n", ev.RecircID)
		}
		if nat := ev.Ct.NAT; nat != nil {
			sb.WriteString("Replacing src/dst IP/ports to simulate NAT:\n Initial flow: ")
			writeIPFlow(&sb, &rfl.Key, nat)
			simulateNAT(&rfl.Key, nat)
			sb.WriteString(" Modified flow: ")
			writeIPFlow(&sb, &rfl.Key, nat)
		}
		sb.WriteString(strings.Repeat("=", 79) + "\n\n")
		rkey := rfl.Key
		rkey.InPort = odpIn
		table := uint8(0)
		if fz, ok := tr.recirc.Get(ev.RecircID); ok {
			table = fz.Table
		}
		tr.pass(&sb, rfl, rkey, nil, &queue, table)
	}
	return sb.String()
}

// traceLine prints one translation step at the column xlate computed, as
// Open vSwitch's ofproto/trace lays its tree out.
func traceLine(sb *strings.Builder, ev *xlate.TraceEvent) {
	pad := func(n int) string { return strings.Repeat(" ", max(n, 0)) }
	switch ev.Kind {
	case xlate.TraceRule:
		r := ev.Rule
		rm := r.Match()
		m := ofptext.FormatMatch(&rm, ofptext.DefaultPriority)
		desc := fmt.Sprintf("priority %d", r.Priority)
		if m != "" {
			desc = m + ", " + desc
		}
		if r.Cookie != 0 {
			desc += fmt.Sprintf(", cookie %#x", r.Cookie)
		}
		fmt.Fprintf(sb, "%s%2d. %s\n", pad(ev.Indent-1), ev.Table, desc)
		if len(r.Actions) == 0 && !ev.Skipped {
			fmt.Fprintf(sb, "%sdrop\n", pad(ev.ActIndent))
		}
	case xlate.TraceMiss:
		fmt.Fprintf(sb, "%s%2d. No match.\n", pad(ev.Indent-1), ev.Table)
		if !ev.Skipped {
			fmt.Fprintf(sb, "%sdrop\n", pad(ev.ActIndent))
		}
	case xlate.TraceFragDrop:
		fmt.Fprintf(sb, "%s%2d. Packets are IP fragments and the fragment handling mode is \"drop\".\n%sdrop\n", pad(ev.Indent-1), ev.Table, pad(ev.ActIndent))
	case xlate.TraceMissPacketIn:
		// Open vSwitch runs its internal miss rule, whose controller
		// action has an internal reason that prints empty.
		fmt.Fprintf(sb, "%s%2d. No match, and a \"packet-in\" is called for.\n%scontroller(reason=)\n", pad(ev.Indent-1), ev.Table, pad(ev.ActIndent))
	case xlate.TraceActionSetIs:
		if len(ev.Actions) == 0 {
			fmt.Fprintf(sb, "%s-> action set %s empty\n", pad(ev.Indent), ev.Text)
		} else {
			fmt.Fprintf(sb, "%s-> action set %s: %s\n", pad(ev.Indent), ev.Text, ofptext.FormatActions(ev.Actions, mf.OF10))
		}
	case xlate.TraceBucket:
		fmt.Fprintf(sb, "%sbucket %d\n", pad(ev.Indent), ev.Bucket)
	case xlate.TraceActionSet:
		fmt.Fprintf(sb, "%s--. Executing action set:\n", pad(ev.Indent))
	case xlate.TraceAction:
		fmt.Fprintf(sb, "%s%s\n", pad(ev.Indent), ofptext.FormatActions([]ofp.Action{*ev.Action}, mf.OF10))
	case xlate.TraceNote:
		fmt.Fprintf(sb, "%s-> %s\n", pad(ev.Indent), ev.Text)
	case xlate.TraceSubfield:
		fmt.Fprintf(sb, "%s-> %s\n", pad(ev.Indent), ofptext.FormatSubfieldIsNow(*ev.Sub, ev.Value))
	case xlate.TraceBridge:
		fmt.Fprintf(sb, "\n%sbridge(\"%s\")\n%s%s\n", pad(ev.Indent), ev.Text, pad(ev.Indent), strings.Repeat("-", len(ev.Text)+10))
	case xlate.TraceSkip:
		fmt.Fprintf(sb, "%s>> %s\n", pad(ev.Indent), ev.Text)
	case xlate.TraceError:
		fmt.Fprintf(sb, "%s>>>> %s <<<<\n", pad(ev.Indent), ev.Text)
	}
}

// maxTracePasses bounds the recirculations a trace follows.
const maxTracePasses = 64

// pass prints one translation: the flow, the steps, the final flow,
// the megaflow and the datapath actions. A pass resumed from a
// recirculation (resume > 0 or a recirc_id) starts with Open vSwitch's
// "thaw" lines. Recirculations ct() queued go to queue.
func (tr *tracer) pass(sb *strings.Builder, fl mf.Flow, key flow.Key, pkt *packet.Packet, queue *[]*xlate.TraceEvent, resume uint8) {
	tr.passActions(sb, fl, key, pkt, queue, resume, nil)
}

// passActions is pass; with acts not nil the pass runs them as
// a packet-out's actions (each printed as translation reaches it).
func (tr *tracer) passActions(sb *strings.Builder, fl mf.Flow, key flow.Key, pkt *packet.Packet, queue *[]*xlate.TraceEvent, resume uint8, acts []ofp.Action) {
	fmt.Fprintf(sb, "Flow: %s\n\nbridge(\"%s\")\n%s\n", flowString(&fl), tr.name, strings.Repeat("-", len(tr.name)+10))
	if key.RecircID != 0 {
		fmt.Fprintf(sb, "    thaw\n        Resuming from table %d\n", resume)
	}
	xin := xlate.In{Key: key, Packet: pkt, Trace: func(ev *xlate.TraceEvent) {
		if ev.Kind == xlate.TraceRecirc {
			if ev.Ct != nil && ev.Flow != nil {
				*queue = append(*queue, ev)
			}
			return
		}
		traceLine(sb, ev)
	}}
	// The traced flow's registers and metadata are where translation
	// starts, as in Open vSwitch.
	xin.Regs, xin.Metadata = fl.Regs, fl.Metadata
	if acts != nil {
		xin.OFActions, xin.InPort = acts, uint16(fl.InPort)
	}
	var out xlate.Out
	tr.xl.Translate(&xin, &out)
	if pkt != nil && tr.learn != nil {
		tr.learn(out.Learned)
	}
	final := out.Final
	final.InPort = fl.InPort
	final.RecircID = fl.RecircID
	if final.ActsetOutput == xlate.PortUnset {
		final.ActsetOutput = fl.ActsetOutput // translation starts with it unset
	}
	if final == fl {
		sb.WriteString("\nFinal flow: unchanged\n")
	} else {
		fmt.Fprintf(sb, "\nFinal flow: %s\n", flowString(&final))
	}
	mm := megaflowMatch(&key, &out.Mask, uint16(fl.InPort))
	if t := out.TunMeta; t != nil {
		mm.Flow.Key.TunMeta, mm.Flow.Key.TunMetaPresent = t.Meta, t.Present&t.PresentMask
		mm.Mask.Key.TunMeta, mm.Mask.Key.TunMetaPresent = t.MetaMask, t.PresentMask
		for i := range mm.Flow.Key.TunMeta {
			mm.Flow.Key.TunMeta[i] &= t.MetaMask[i]
		}
		mm.Flow.Key.TunFlags &^= flow.TunFlagUDPIF
		mm.Mask.Key.TunFlags &^= flow.TunFlagUDPIF
		mm.Tun = t.Map
	}
	fmt.Fprintf(sb, "Megaflow: %s\n", ofptext.FormatMegaflow(&mm))
	dpActs := out.Actions.String()
	if len(out.Actions) == 0 {
		dpActs = "drop"
	}
	fmt.Fprintf(sb, "Datapath actions: %s\n", dpActs)
	if out.SlowPath || out.SlowReason != 0 {
		sb.WriteString("This flow is handled by the userspace slow path because it:\n")
		if out.SlowReason&odp.SlowCFM != 0 {
			sb.WriteString("  - Consists of CFM packets.\n")
		}
		if out.SlowReason&odp.SlowBFD != 0 {
			sb.WriteString("  - Consists of BFD packets.\n")
		}
		if out.SlowPath || out.SlowReason&odp.SlowAction != 0 {
			sb.WriteString("  - Uses action(s) not supported by datapath.\n")
		}
	}
	if out.Err != nil {
		fmt.Fprintf(sb, "Translation failed (%s), packet is dropped.\n", xlate.Reason(out.Err))
	}
}

// clearCtTuple zeroes the original-direction tuple fields.
func clearCtTuple(k *flow.Key) {
	k.CtNwProto, k.CtNwSrc, k.CtNwDst, k.CtTpSrc, k.CtTpDst = 0, 0, 0, 0, 0
	k.CtIPv6Src, k.CtIPv6Dst = [16]byte{}, [16]byte{}
}

// writeIPFlow prints the addresses and ports NAT may change, as Open
// vSwitch's trace does; nothing (just the newline) for a nat without a
// range.
func writeIPFlow(sb *strings.Builder, k *flow.Key, nat *odp.CtNAT) {
	if nat.HasAddr && !nat.IPv6 {
		fmt.Fprintf(sb, "nw_src=%s,tp_src=%d,nw_dst=%s,tp_dst=%d", ipv4String(k.NwSrc), k.TpSrc, ipv4String(k.NwDst), k.TpDst)
	} else if nat.HasAddr {
		fmt.Fprintf(sb, "ipv6_src=%s,tp_src=%d,ipv6_dst=%s,tp_dst=%d", ipv6String(k.IPv6Src), k.TpSrc, ipv6String(k.IPv6Dst), k.TpDst)
	}
	sb.WriteString("\n")
}

// simulateNAT rewrites the flow to the first address and port of the
// NAT range.
func simulateNAT(k *flow.Key, nat *odp.CtNAT) {
	if !nat.HasAddr {
		return
	}
	set := func(v4 *uint32, v6 *[16]byte, port *uint16) {
		if nat.IPv6 {
			*v6 = nat.MinAddr
		} else {
			*v4 = binary.BigEndian.Uint32(nat.MinAddr[:4])
		}
		if nat.MinPort != 0 {
			*port = nat.MinPort
		}
	}
	if nat.Src {
		set(&k.NwSrc, &k.IPv6Src, &k.TpSrc)
	}
	if nat.Dst {
		set(&k.NwDst, &k.IPv6Dst, &k.TpDst)
	}
}

func ipv4String(a uint32) string {
	return netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}).String()
}

func ipv6String(a [16]byte) string { return "[" + netip.AddrFrom16(a).String() + "]" }

// megaflowMatch turns a megaflow (datapath key and mask) into an
// OpenFlow-style match for printing, with in_port as an OpenFlow port.
func megaflowMatch(k *flow.Key, m *flow.Mask, inPort uint16) mf.Match {
	var mm mf.Match
	mm.Mask.Key = flow.Key(*m)
	// Open vSwitch leaves out the VLAN headers the packet does not have
	// (its datapath key implies them: the Ethernet type is exact).
	for i := range k.VLANs {
		if k.VLANs[i].TCI&flow.VLANCFI == 0 {
			mm.Mask.Key.VLANs[i] = flow.VLAN{}
		}
	}
	mm.Flow.Key = k.Masked((*flow.Mask)(&mm.Mask.Key))
	mm.Flow.InPort = uint32(inPort)
	mm.Mask.InPort = 0xffff
	return mm
}

// flowString formats a flow as Open vSwitch's flow_format: every field
// the packet has, exactly.
func flowString(fl *mf.Flow) string {
	var m mf.Match
	m.Flow = *fl
	k, w := &m.Flow.Key, &m.Mask.Key
	m.Mask.InPort = 0xffff
	w.VLANs[0].TCI = 0xffff
	w.EthSrc = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	w.EthDst = w.EthSrc
	w.EthType = 0xffff
	for i, r := range fl.Regs {
		if r != 0 {
			m.Mask.Regs[i] = ^uint32(0)
		}
	}
	if fl.Metadata != 0 {
		m.Mask.Metadata = ^uint64(0)
	}
	if k.RecircID != 0 {
		w.RecircID = ^uint32(0)
	}
	if k.PktMark != 0 {
		w.PktMark = ^uint32(0)
	}
	if k.CtState != 0 {
		w.CtState = 0xff
	}
	if k.CtZone != 0 {
		w.CtZone = 0xffff
	}
	if k.CtMark != 0 {
		w.CtMark = ^uint32(0)
	}
	flow.MarkL3L4(w, k)
	tunnel := k.TunDst != 0 || k.TunIPv6Dst != [16]byte{}
	switch {
	case tunnel:
		// Every tunnel field of a tunnel packet, as flow_format.
		if k.TunFlags&packet.TunFlagKey != 0 {
			w.TunID = ^uint64(0)
		}
		w.TunSrc, w.TunDst = ^uint32(0), ^uint32(0)
		for i := range w.TunIPv6Src {
			w.TunIPv6Src[i], w.TunIPv6Dst[i] = 0xff, 0xff
		}
		w.TunTos, w.TunTTL = 0xff, 0xff
		w.TunGbpID, w.TunGbpFlags = 0xffff, 0xff
	case k.TunID != 0:
		w.TunID = ^uint64(0)
	}
	s := ofptext.FormatMatch(&m, ofptext.DefaultPriority)
	if tunnel {
		// Fields gvs does not model, which Open vSwitch prints as zero,
		// and the tunnel flags in bit order (flow_tun_flag_to_string).
		var names []string
		for _, f := range []struct {
			bit  uint16
			name string
		}{{packet.TunFlagOAM, "oam"}, {packet.TunFlagDontFragment, "df"}, {packet.TunFlagCsum, "csum"}, {packet.TunFlagKey, "key"}} {
			if k.TunFlags&f.bit != 0 {
				names = append(names, f.name)
			}
		}
		flags := "0"
		if len(names) > 0 {
			flags = strings.Join(names, "|")
		}
		ttl := fmt.Sprintf("tun_ttl=%d,", k.TunTTL)
		s = strings.Replace(s, ttl, ttl+"tun_erspan_ver=0,gtpu_flags=0,gtpu_msgtype=0,tun_flags="+flags+",", 1)
	}
	return s
}
