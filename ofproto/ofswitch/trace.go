package ofswitch

import (
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/datapath/flow"
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
func (b *Bridge) Trace(in TraceInput) string {
	snap := b.xl.Snapshot()
	fl := in.Flow
	key := fl.Key
	odpIn := uint32(xlate.NoODP)
	if p := snap.Ports[uint16(fl.InPort)]; p != nil {
		odpIn = p.ODP
	}
	var pkt *packet.Packet
	if in.Packet != nil {
		pkt = packet.FromBytes(in.Packet)
		pkt.Md.InPort = odpIn
		flow.Extract(pkt, &key)
		fl.Key = key
		fl.InPort = in.Flow.InPort
	}
	key.InPort = odpIn
	var sb strings.Builder
	fmt.Fprintf(&sb, "Flow: %s\n\nbridge(\"%s\")\n%s\n", flowString(&fl), b.cfg.Name, strings.Repeat("-", len(b.cfg.Name)+10))
	xin := xlate.In{Key: key, Packet: pkt, Trace: func(ev *xlate.TraceEvent) { traceLine(&sb, ev) }}
	var out xlate.Out
	b.xl.Translate(&xin, &out)
	final := out.Final
	final.InPort = fl.InPort
	final.RecircID = fl.RecircID
	if final == fl {
		sb.WriteString("\nFinal flow: unchanged\n")
	} else {
		fmt.Fprintf(&sb, "\nFinal flow: %s\n", flowString(&final))
	}
	mm := megaflowMatch(&key, &out.Mask, uint16(in.Flow.InPort))
	fmt.Fprintf(&sb, "Megaflow: %s\n", ofptext.FormatMegaflow(&mm))
	acts := out.Actions.String()
	if len(out.Actions) == 0 {
		acts = "drop"
	}
	fmt.Fprintf(&sb, "Datapath actions: %s\n", acts)
	if out.Err != nil {
		fmt.Fprintf(&sb, "Translation failed (%v), packet is dropped.\n", out.Err)
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
		m := ofptext.FormatMatch(&r.Match, ofptext.DefaultPriority)
		desc := fmt.Sprintf("priority %d", r.Priority)
		if m != "" {
			desc = m + ", " + desc
		}
		if r.Cookie != 0 {
			desc += fmt.Sprintf(", cookie %#x", r.Cookie)
		}
		fmt.Fprintf(sb, "%s%d. %s\n", pad(ev.Indent), ev.Table, desc)
		if len(r.Actions) == 0 {
			fmt.Fprintf(sb, "%sdrop\n", pad(ev.ActIndent))
		}
	case xlate.TraceMiss:
		fmt.Fprintf(sb, "%s%d. No match.\n%sdrop\n", pad(ev.Indent), ev.Table, pad(ev.ActIndent))
	case xlate.TraceAction:
		fmt.Fprintf(sb, "%s%s\n", pad(ev.Indent), ofptext.FormatActions([]ofp.Action{*ev.Action}, mf.OF10))
	case xlate.TraceNote:
		fmt.Fprintf(sb, "%s-> %s\n", pad(ev.Indent), ev.Text)
	case xlate.TraceBridge:
		fmt.Fprintf(sb, "\nbridge(\"%s\")\n%s\n", ev.Text, strings.Repeat("-", len(ev.Text)+10))
	case xlate.TraceSkip:
		fmt.Fprintf(sb, "%s>> %s\n", pad(ev.Indent), ev.Text)
	}
}

// megaflowMatch turns a megaflow (datapath key and mask) into an
// OpenFlow-style match for printing, with in_port as an OpenFlow port.
func megaflowMatch(k *flow.Key, m *flow.Mask, inPort uint16) mf.Match {
	var mm mf.Match
	mm.Flow.Key = k.Masked(m)
	mm.Mask.Key = flow.Key(*m)
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
	switch k.EthType {
	case flow.EthTypeIPv4, flow.EthTypeIPv6:
		if k.EthType == flow.EthTypeIPv4 {
			w.NwSrc, w.NwDst = ^uint32(0), ^uint32(0)
		} else {
			w.IPv6Src = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
			w.IPv6Dst = w.IPv6Src
			w.IPv6Label = 0xfffff
		}
		w.NwProto, w.NwTos, w.NwTTL, w.NwFrag = 0xff, 0xff, 0xff, flow.FragMask
		switch k.NwProto {
		case flow.IPProtoTCP, flow.IPProtoUDP, flow.IPProtoSCTP:
			w.TpSrc, w.TpDst = 0xffff, 0xffff
			if k.NwProto == flow.IPProtoTCP {
				w.TCPFlags = 0x0fff
			}
		case flow.IPProtoICMP, flow.IPProtoICMPv6:
			w.TpSrc, w.TpDst = 0xff, 0xff
		}
	case flow.EthTypeARP, flow.EthTypeRARP:
		w.NwSrc, w.NwDst, w.NwProto = ^uint32(0), ^uint32(0), 0xff
		w.ArpSha = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		w.ArpTha = w.ArpSha
	}
	return ofptext.FormatMatch(&m, ofptext.DefaultPriority)
}
