package ofprint

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// verbosePrinter prints a message whose text depends on ovs-ofctl's
// verbosity: packets are dissected from verbosity 1 (monitor and snoop
// print at 2).
type verbosePrinter func(w *bufio.Writer, m *ofp.Msg, verbosity int) error

// verbosePrinters cover the asynchronous messages and packet-out; they
// take precedence over printers.
var verbosePrinters = map[bodyKind]verbosePrinter{
	kindOf(&ofp.PacketIn{}): printPacketIn,
	kindOf(&ofp.Resume{}): func(w *bufio.Writer, m *ofp.Msg, verbosity int) error {
		return printPacketInAs(w, m, &m.Body.(*ofp.Resume).PacketIn, "NXT_RESUME", verbosity)
	},
	kindOf(&ofp.PacketOut{}):   printPacketOut,
	kindOf(&ofp.PortStatus{}):  printPortStatus,
	kindOf(&ofp.FlowRemoved{}): printFlowRemoved,
}

// packetInReasons name OFPR_* as ovs-ofctl prints them.
var packetInReasons = []string{"no_match", "action", "invalid_ttl", "action_set", "group", "packet_out"}

func printPacketIn(w *bufio.Writer, m *ofp.Msg, verbosity int) error {
	pin := m.Body.(*ofp.PacketIn)
	name := "OFPT_PACKET_IN"
	switch pin.Format {
	case ofp.PacketInNXT:
		name = "NXT_PACKET_IN"
	case ofp.PacketIn2:
		name = "NXT_PACKET_IN2"
	}
	return printPacketInAs(w, m, pin, name, verbosity)
}

// printPacketInAs prints a packet-in or resume body under name.
func printPacketInAs(w *bufio.Writer, m *ofp.Msg, pin *ofp.PacketIn, name string, verbosity int) error {
	var cont *ofp.PacketInPrivate
	if len(pin.Continuation) != 0 {
		var err error
		if cont, err = ofp.DecodeContinuation(pin.Continuation, m.Version); err != nil {
			return fmt.Errorf("packet-in continuation: %w", err)
		}
	}
	header(w, name, m)
	if pin.TableID != 0 {
		fmt.Fprintf(w, " table_id=%d", pin.TableID)
	}
	if pin.Cookie != ^uint64(0) {
		fmt.Fprintf(w, " cookie=%#x", pin.Cookie)
	}
	fmt.Fprintf(w, " total_len=%d %s", pin.TotalLen, ofptext.FormatMatch(&pin.Match, ofptext.DefaultPriority))
	reason := strconv.Itoa(int(pin.Reason))
	if int(pin.Reason) < len(packetInReasons) {
		reason = packetInReasons[pin.Reason]
	}
	fmt.Fprintf(w, " (via %s) data_len=%d", reason, len(pin.Data))
	if pin.BufferID == ofp.BufferNone {
		w.WriteString(" (unbuffered)")
		if int(pin.TotalLen) != len(pin.Data) {
			w.WriteString(" (***total_len != data_len***)")
		}
	} else {
		fmt.Fprintf(w, " buffer=0x%08x", pin.BufferID)
		if int(pin.TotalLen) < len(pin.Data) {
			w.WriteString(" (***total_len < data_len***)")
		}
	}
	w.WriteByte('\n')
	if len(pin.Userdata) != 0 {
		w.WriteString(" userdata=")
		for i, c := range pin.Userdata {
			if i > 0 {
				w.WriteByte('.')
			}
			fmt.Fprintf(w, "%02x", c)
		}
		w.WriteByte('\n')
	}
	if cont != nil {
		printContinuation(w, cont, m.Version)
	}
	if verbosity > 0 {
		w.WriteString(packetString(pin.Data))
	}
	if verbosity > 2 {
		hexDumpPlain(w, pin.Data)
	}
	return nil
}

// printContinuation prints a paused packet-in's continuation as
// ovs-ofctl does: the frozen action groups as unroll_xlate(table, cookie)
// followed by their actions.
func printContinuation(w *bufio.Writer, p *ofp.PacketInPrivate, v uint8) {
	if p.Bridge != ([16]byte{}) {
		// Open vSwitch puts its struct uuid (four host-order words) on
		// the wire as is; ovs-ofctl on a little-endian host reads it so.
		var u [4]uint32
		for i := range u {
			u[i] = binary.LittleEndian.Uint32(p.Bridge[4*i:])
		}
		fmt.Fprintf(w, " continuation.bridge=%08x-%04x-%04x-%04x-%04x%08x\n", u[0], u[1]>>16, u[1]&0xffff, u[2]>>16, u[2]&0xffff, u[3])
	}
	if len(p.Stack) > 0 {
		w.WriteString(" continuation.stack=(top)")
		for i := len(p.Stack) - 1; i >= 0; i-- {
			w.WriteString(" " + subvalueString(p.Stack[i]))
		}
		w.WriteString(" (bottom)\n")
	}
	if p.Mirrors != 0 {
		fmt.Fprintf(w, " continuation.mirrors=%#x\n", p.Mirrors)
	}
	if p.Conntracked {
		w.WriteString(" continuation.conntracked=true\n")
	}
	var parts []string
	for _, g := range p.Groups {
		if len(g.Actions) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("unroll_xlate(table=%d, cookie=%d)", g.TableID, g.Cookie), ofptext.FormatActions(g.Actions, v))
	}
	if len(parts) > 0 {
		w.WriteString(" continuation.actions=" + strings.Join(parts, ",") + "\n")
	}
	if len(p.ActionSet) > 0 {
		w.WriteString(" continuation.action_set=" + ofptext.FormatActions(p.ActionSet, v) + "\n")
	}
	if p.ODPPort != 0 {
		fmt.Fprintf(w, " continuation.odp_port=%d\n", p.ODPPort)
	}
}

// subvalueString prints a stack value as Open vSwitch's
// mf_subvalue_format: hexadecimal without leading zero bytes, 0 if zero.
func subvalueString(b []byte) string {
	for i, c := range b {
		if c != 0 {
			s := fmt.Sprintf("0x%x", c)
			for _, d := range b[i+1:] {
				s += fmt.Sprintf("%02x", d)
			}
			return s
		}
	}
	return "0"
}

func printPacketOut(w *bufio.Writer, m *ofp.Msg, verbosity int) error {
	po := m.Body.(*ofp.PacketOut)
	acts, err := ofp.DecodeActions(po.Actions, m.Version)
	if err != nil {
		return fmt.Errorf("packet-out actions: %w", err)
	}
	header(w, "OFPT_PACKET_OUT", m)
	match := po.Match
	if m.Version > mf.OF10 && match.Mask.InPort == 0 {
		// OpenFlow 1.1-1.4 carry in_port outside the match.
		if p16, err := ofp.PortFromOF11(po.InPort); err == nil {
			match.Flow.InPort, match.Mask.InPort = uint32(p16), 0xffff
		}
	}
	fmt.Fprintf(w, " %s actions=%s", ofptext.FormatMatch(&match, ofptext.DefaultPriority), ofptext.FormatActions(acts, m.Version))
	if po.BufferID != ofp.BufferNone {
		fmt.Fprintf(w, " buffer=0x%08x\n", po.BufferID)
		return nil
	}
	fmt.Fprintf(w, " data_len=%d", len(po.Data))
	if verbosity > 0 && len(po.Data) > 0 {
		w.WriteByte('\n')
		w.WriteString(packetString(po.Data))
	} else {
		w.WriteByte('\n')
	}
	if verbosity > 2 {
		hexDumpPlain(w, po.Data)
	}
	return nil
}

// portStatusReasons name OFPPR_* as ovs-ofctl prints them.
var portStatusReasons = []string{"ADD", "DEL", "MOD"}

func printPortStatus(w *bufio.Writer, m *ofp.Msg, _ int) error {
	ps := m.Body.(*ofp.PortStatus)
	header(w, "OFPT_PORT_STATUS", m)
	if int(ps.Reason) < len(portStatusReasons) {
		fmt.Fprintf(w, " %s:", portStatusReasons[ps.Reason])
	}
	printPorts(w, m.Version, []ofp.Port{ps.Desc})
	return nil
}

// flowRemovedReasons name OFPRR_* as ovs-ofctl prints them.
var flowRemovedReasons = []string{"idle", "hard", "delete", "group_delete", "meter_delete", "eviction"}

func printFlowRemoved(w *bufio.Writer, m *ofp.Msg, _ int) error {
	fr := m.Body.(*ofp.FlowRemoved)
	name := "OFPT_FLOW_REMOVED"
	if fr.Format == ofp.FormatNXM {
		name = "NXT_FLOW_REMOVED"
	}
	header(w, name, m)
	reason := strconv.Itoa(int(fr.Reason))
	if int(fr.Reason) < len(flowRemovedReasons) {
		reason = flowRemovedReasons[fr.Reason]
	}
	fmt.Fprintf(w, " %s reason=%s", ofptext.FormatMatch(&fr.Match, fr.Priority), reason)
	if fr.TableID != 255 {
		fmt.Fprintf(w, " table_id=%d", fr.TableID)
	}
	if fr.Cookie != 0 {
		fmt.Fprintf(w, " cookie:%#x", fr.Cookie)
	}
	fmt.Fprintf(w, " duration%s idle%d", exactDuration(fr.DurationSec, fr.DurationNsec), fr.IdleTimeout)
	if fr.HardTimeout != 0 {
		fmt.Fprintf(w, " hard%d", fr.HardTimeout)
	}
	fmt.Fprintf(w, " pkts%d bytes%d\n", fr.PacketCount, fr.ByteCount)
	return nil
}

// exactDuration prints a duration as ovs-ofctl's ofp_print_duration:
// milliseconds when exact, else every significant nanosecond digit.
func exactDuration(sec, nsec uint32) string {
	s := strconv.FormatUint(uint64(sec), 10)
	if nsec > 0 {
		if nsec%1000000 == 0 {
			s += fmt.Sprintf(".%03d", nsec/1000000)
		} else {
			s += strings.TrimRight(fmt.Sprintf(".%09d", nsec), "0")
		}
	}
	return s + "s"
}

// ErrorMsgBody prints a decoded OFPT_ERROR as printErrorMsg does.
func ErrorMsgBody(w *bufio.Writer, m *ofp.Msg) {
	em := m.Body.(*ofp.ErrorMsg)
	header(w, "OFPT_ERROR", m)
	code := em.ErrCode(m.Version)
	if code == 0 {
		fmt.Fprintf(w, " ***decode error: type %d code %d***\n", em.Type, em.Code)
	} else {
		fmt.Fprintf(w, " %s\n", code)
	}
	if len(em.Data) >= 8 {
		if err := Message(w, em.Data); err != nil {
			HexDump(w, em.Data)
		}
	}
}

// packetString dissects an Ethernet frame as ovs-ofctl's
// ofp_packet_to_string: the flow it makes (every field the packet has;
// zero metadata omitted) and the transport checksum, then a newline.
func packetString(data []byte) string {
	p := packet.FromBytes(data)
	var m mf.Match
	flow.Extract(p, &m.Flow.Key)
	k, w := &m.Flow.Key, &m.Mask.Key
	w.VLANs[0].TCI = 0xffff
	if k.VLANs[0].TCI != 0 {
		w.VLANs[1].TCI = 0xffff // Open vSwitch's flows have two VLAN slots
	}
	w.EthSrc = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	w.EthDst = w.EthSrc
	w.EthType = 0xffff
	flow.MarkL3L4(w, k)
	var sb strings.Builder
	sb.WriteString(ofptext.FormatMatch(&m, ofptext.DefaultPriority))
	l4 := p.L4Data()
	isIP := k.EthType == flow.EthTypeIPv4 || k.EthType == flow.EthTypeIPv6
	switch {
	case !isIP:
	case k.NwProto == flow.IPProtoTCP && len(l4) >= 20:
		fmt.Fprintf(&sb, " tcp_csum:%x", binary.BigEndian.Uint16(l4[16:]))
	case k.NwProto == flow.IPProtoUDP && len(l4) >= 8:
		fmt.Fprintf(&sb, " udp_csum:%x", binary.BigEndian.Uint16(l4[6:]))
	case k.NwProto == flow.IPProtoSCTP && len(l4) >= 12:
		fmt.Fprintf(&sb, " sctp_csum:%x", binary.BigEndian.Uint32(l4[8:]))
	case k.NwProto == flow.IPProtoICMP && len(l4) >= 4:
		fmt.Fprintf(&sb, " icmp_csum:%x", binary.BigEndian.Uint16(l4[2:]))
	case k.NwProto == flow.IPProtoICMPv6 && len(l4) >= 4:
		fmt.Fprintf(&sb, " icmp6_csum:%x", binary.BigEndian.Uint16(l4[2:]))
	}
	sb.WriteByte('\n')
	return sb.String()
}
