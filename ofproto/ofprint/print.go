package ofprint

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// errNotPrinted marks message types ofp decodes but gvs-ofctl cannot
// print yet in ovs-ofctl's format.
var errNotPrinted = errors.New("not printed yet by gvs-ofctl")

// Message prints one OpenFlow message as ovs-ofctl's ofp-print does.
func Message(w *bufio.Writer, b []byte) error { return MessageV(w, b, 0) }

// MessageV prints with ovs-ofctl's verbosity (monitor and snoop use 2).
func MessageV(w *bufio.Writer, b []byte, verbosity int) error {
	if len(b) < 8 {
		fmt.Fprintf(w, "OpenFlow packet too short (only %d bytes):\n", len(b))
		HexDump(w, b)
		return nil
	}
	m, err := ofp.Decode(b)
	if err != nil {
		if printFlowModDecodeError(w, b, err) || printTableFeaturesPartial(w, b, verbosity) {
			return nil
		}
		return fmt.Errorf("cannot decode %d-byte message: %w", len(b), err)
	}
	if _, ok := m.Body.(*ofp.ErrorMsg); ok {
		ErrorMsgBody(w, m)
		return nil
	}
	if printPortDecodeError(w, m, b) {
		return nil
	}
	if _, _, _, ok := tableFeaturesOf(m); ok {
		printTableFeaturesMsg(w, m, b, verbosity)
		return nil
	}
	if vp, ok := verbosePrinters[kindOf(m.Body)]; ok {
		return vp(w, m, verbosity)
	}
	p, ok := printers[kindOf(m.Body)]
	if !ok {
		return fmt.Errorf("%s: %w", m.Raw, errNotPrinted)
	}
	if err := p(w, m); err != nil {
		if printFlowModDecodeError(w, b, err) {
			return nil
		}
		return err
	}
	return nil
}

// printFlowModDecodeError prints a flow mod that does not decode (its
// match or actions break a rule of its version) as ovs-ofctl does, the
// error and a hex dump, and reports whether it did. ovs-ofctl itself sends
// some of these (decap in OpenFlow 1.0, debug_slow).
func printFlowModDecodeError(w *bufio.Writer, b []byte, err error) bool {
	code := ofp.CodeOf(err)
	if code == 0 || len(b) < 8 || int(binary.BigEndian.Uint16(b[2:])) != len(b) {
		return false
	}
	name := ""
	switch {
	case b[1] == 14:
		name = "OFPT_FLOW_MOD"
	case b[0] == mf.OF10 && b[1] == 4 && len(b) >= 16 && binary.BigEndian.Uint32(b[8:]) == ofp.VendorNicira && binary.BigEndian.Uint32(b[12:]) == 13:
		name = "NXT_FLOW_MOD"
	case b[0] > mf.OF10 && b[1] == 15:
		name = "OFPT_GROUP_MOD"
	case b[0] == mf.OF10 && b[1] == 4 && len(b) >= 16 && binary.BigEndian.Uint32(b[8:]) == ofp.VendorNicira && binary.BigEndian.Uint32(b[12:]) == 31:
		name = "NXT_GROUP_MOD"
	case b[0] >= mf.OF13 && b[1] == 29:
		name = "OFPT_METER_MOD"
	case b[1] == 4 && len(b) >= 16 && binary.BigEndian.Uint32(b[8:]) == ofp.VendorNicira && binary.BigEndian.Uint32(b[12:]) == 24:
		name = "NXT_TLV_TABLE_MOD" // a switch's error reply quotes a bad one
	default:
		return false
	}
	fmt.Fprintf(w, "%s%s (xid=%#x): ***decode error: %s***\n", name, VersionTag(b[0]), binary.BigEndian.Uint32(b[4:]), code)
	HexDump(w, b)
	return true
}

// msgPrinter prints a decoded message including its header line.
type msgPrinter func(w *bufio.Writer, m *ofp.Msg) error

// bodyKind names a body type for the printer table.
type bodyKind string

func kindOf(b ofp.Message) bodyKind { return bodyKind(fmt.Sprintf("%T", b)) }

var printers = map[bodyKind]msgPrinter{
	kindOf(&ofp.Hello{}): printHello,
	kindOf(&ofp.EchoRequest{}): func(w *bufio.Writer, m *ofp.Msg) error {
		return printEcho(w, m, "OFPT_ECHO_REQUEST", m.Body.(*ofp.EchoRequest).Data)
	},
	kindOf(&ofp.EchoReply{}): func(w *bufio.Writer, m *ofp.Msg) error {
		return printEcho(w, m, "OFPT_ECHO_REPLY", m.Body.(*ofp.EchoReply).Data)
	},
	kindOf(&ofp.FeaturesRequest{}):  headerOnly("OFPT_FEATURES_REQUEST"),
	kindOf(&ofp.FeaturesReply{}):    printFeaturesReply,
	kindOf(&ofp.GetConfigRequest{}): headerOnly("OFPT_GET_CONFIG_REQUEST"),
	kindOf(&ofp.GetConfigReply{}):   printConfig("OFPT_GET_CONFIG_REPLY"),
	kindOf(&ofp.SetConfig{}):        printConfig("OFPT_SET_CONFIG"),
	kindOf(&ofp.BarrierRequest{}):   headerOnly("OFPT_BARRIER_REQUEST"),
	kindOf(&ofp.BarrierReply{}):     headerOnly("OFPT_BARRIER_REPLY"),
	kindOf(&ofp.FlowMod{}):          printFlowMod,
	kindOf(&ofp.BundleCtrl{}):       printBundleCtrl,
}

var bundleCtrlTypes = []string{"OPEN_REQUEST", "OPEN_REPLY", "CLOSE_REQUEST", "CLOSE_REPLY",
	"COMMIT_REQUEST", "COMMIT_REPLY", "DISCARD_REQUEST", "DISCARD_REPLY"}

func printBundleCtrl(w *bufio.Writer, m *ofp.Msg) error {
	bc := m.Body.(*ofp.BundleCtrl)
	if int(bc.Type) >= len(bundleCtrlTypes) || len(bc.Properties) != 0 {
		return fmt.Errorf("bundle control type %d: %w", bc.Type, errNotPrinted)
	}
	name := "OFPT_BUNDLE_CONTROL"
	if m.Version < mf.OF14 {
		name = "ONFT_BUNDLE_CONTROL"
	}
	header(w, name, m)
	id := "0" // C's %#x prints zero without 0x
	if bc.BundleID != 0 {
		id = fmt.Sprintf("%#x", bc.BundleID)
	}
	fmt.Fprintf(w, "\n bundle_id=%s type=%s flags=", id, bundleCtrlTypes[bc.Type])
	var fs []string
	if bc.Flags&ofp.BundleAtomic != 0 {
		fs = append(fs, "atomic")
	}
	if bc.Flags&ofp.BundleOrdered != 0 {
		fs = append(fs, "ordered")
	}
	if len(fs) == 0 {
		w.WriteString("0\n")
	} else {
		w.WriteString(strings.Join(fs, " ") + "\n")
	}
	return nil
}

func header(w *bufio.Writer, name string, m *ofp.Msg) {
	fmt.Fprintf(w, "%s%s (xid=%#x):", name, VersionTag(m.Version), m.XID)
}

func headerOnly(name string) msgPrinter {
	return func(w *bufio.Writer, m *ofp.Msg) error {
		header(w, name, m)
		w.WriteByte('\n')
		return nil
	}
}

func printHello(w *bufio.Writer, m *ofp.Msg) error {
	header(w, "OFPT_HELLO", m)
	vs := m.Body.(*ofp.Hello).Versions()
	if vs == nil {
		// No bitmap: every version up to the header's.
		for v := uint8(1); v <= m.Version && v != 0; v++ {
			vs = append(vs, v)
		}
	}
	w.WriteString("\n version bitmap: ")
	for i, v := range vs {
		if i > 0 {
			w.WriteString(", ")
		}
		fmt.Fprintf(w, "%#02x", v)
	}
	w.WriteByte('\n')
	return nil
}

func printEcho(w *bufio.Writer, m *ofp.Msg, name string, data []byte) error {
	header(w, name, m)
	fmt.Fprintf(w, " %d bytes of payload\n", len(data))
	HexDump(w, data)
	return nil
}

// capability bit names per version range: OpenFlow 1.0 has STP and
// ARP_MATCH_IP where later versions have GROUP_STATS and PORT_BLOCKED
// (OpenFlow 1.1 keeps ARP_MATCH_IP).
var (
	capsOF10 = []string{0: "FLOW_STATS", 1: "TABLE_STATS", 2: "PORT_STATS", 3: "STP", 5: "IP_REASM", 6: "QUEUE_STATS", 7: "ARP_MATCH_IP"}
	capsOF11 = []string{0: "FLOW_STATS", 1: "TABLE_STATS", 2: "PORT_STATS", 3: "GROUP_STATS", 5: "IP_REASM", 6: "QUEUE_STATS", 7: "ARP_MATCH_IP"}
	capsOF12 = []string{0: "FLOW_STATS", 1: "TABLE_STATS", 2: "PORT_STATS", 3: "GROUP_STATS", 5: "IP_REASM", 6: "QUEUE_STATS", 8: "PORT_BLOCKED"}
	capsOF14 = []string{0: "FLOW_STATS", 1: "TABLE_STATS", 2: "PORT_STATS", 3: "GROUP_STATS", 5: "IP_REASM", 6: "QUEUE_STATS", 8: "PORT_BLOCKED", 9: "BUNDLES", 10: "FLOW_MONITORING"}
)

// of10ActionNames are OpenFlow 1.0's supported-actions bits in the order
// ovs-ofctl prints them (output and enqueue first).
var of10ActionNames = []struct {
	bit  uint
	name string
}{{0, "output"}, {11, "enqueue"}, {1, "set_vlan_vid"}, {2, "set_vlan_pcp"}, {3, "strip_vlan"},
	{4, "mod_dl_src"}, {5, "mod_dl_dst"}, {6, "mod_nw_src"}, {7, "mod_nw_dst"}, {8, "mod_nw_tos"},
	{9, "mod_tp_src"}, {10, "mod_tp_dst"}}

func printFeaturesReply(w *bufio.Writer, m *ofp.Msg) error {
	f := m.Body.(*ofp.FeaturesReply)
	header(w, "OFPT_FEATURES_REPLY", m)
	fmt.Fprintf(w, " dpid:%016x\nn_tables:%d, n_buffers:%d", f.DatapathID, f.NTables, f.NBuffers)
	if m.Version >= mf.OF13 && f.AuxiliaryID != 0 {
		fmt.Fprintf(w, ", auxiliary_id:%d", f.AuxiliaryID)
	}
	names := capsOF12
	switch m.Version {
	case mf.OF10:
		names = capsOF10
	case mf.OF11:
		names = capsOF11
	}
	if m.Version >= mf.OF14 {
		names = capsOF14
	}
	w.WriteString("\ncapabilities:")
	if f.Capabilities == 0 {
		w.WriteString(" 0")
	}
	for bit := uint(0); bit < 32; bit++ {
		if f.Capabilities&(1<<bit) == 0 {
			continue
		}
		// Reserved and unknown bits are not printed, as in ovs-ofctl.
		if int(bit) < len(names) && names[bit] != "" {
			w.WriteString(" " + names[bit])
		}
	}
	w.WriteByte('\n')
	if m.Version == mf.OF10 && f.Actions != 0 {
		w.WriteString("actions:")
		for _, a := range of10ActionNames {
			if f.Actions&(1<<a.bit) != 0 {
				w.WriteString(" " + a.name)
			}
		}
		w.WriteByte('\n')
	}
	ports := make([]ofp.Port, len(f.Ports))
	for i, p := range f.Ports {
		if m.Version == mf.OF10 {
			p.PortNo = ofp.PortToOF11(uint16(p.PortNo))
		}
		ports[i] = p
	}
	printPorts(w, m.Version, ports)
	return nil
}

var fragModes = [4]string{"normal", "drop", "reassemble", "nx-match"}

func printConfig(name string) msgPrinter {
	return func(w *bufio.Writer, m *ofp.Msg) error {
		var c ofp.SwitchConfig
		switch b := m.Body.(type) {
		case *ofp.GetConfigReply:
			c = b.SwitchConfig
		case *ofp.SetConfig:
			c = b.SwitchConfig
		}
		header(w, name, m)
		fmt.Fprintf(w, " frags=%s", fragModes[c.Flags&3])
		if c.Flags&4 != 0 {
			w.WriteString(" invalid_ttl_to_controller")
		}
		fmt.Fprintf(w, " miss_send_len=%d\n", c.MissSendLen)
		return nil
	}
}

var flowModCommands = [...]string{"ADD", "MOD", "MOD_STRICT", "DEL", "DEL_STRICT"}

func printFlowMod(w *bufio.Writer, m *ofp.Msg) error {
	fm := m.Body.(*ofp.FlowMod)
	if int(fm.Command) >= len(flowModCommands) {
		return fmt.Errorf("flow mod command %d: %w", fm.Command, errNotPrinted)
	}
	if fm.BufferID != 0xffffffff {
		return fmt.Errorf("flow mod with buffer id: %w", errNotPrinted)
	}
	fl := &ofptext.Flow{Version: m.Version, Table: fm.TableID, Priority: fm.Priority, Cookie: fm.Cookie,
		IdleTimeout: fm.IdleTimeout, HardTimeout: fm.HardTimeout, Importance: fm.Importance,
		Flags: fm.Flags, Match: fm.Match}
	cookie, mask := fm.Cookie, fm.CookieMask
	if fm.Format == ofp.FormatNXM {
		cookie = fm.CookieMatch
	}
	switch fm.Format {
	case ofp.FormatOXM:
		acts, err := ofp.DecodeOfpacts(fm.Instructions, m.Version, true)
		if err != nil {
			return fmt.Errorf("flow mod instructions: %w", err)
		}
		fl.Actions = acts
	default:
		acts, err := ofp.DecodeActions(fm.Instructions, m.Version)
		if err != nil {
			return fmt.Errorf("flow mod actions: %w", err)
		}
		fl.Actions = acts
	}
	name := "OFPT_FLOW_MOD"
	if fm.Format == ofp.FormatNXM {
		name = "NXT_FLOW_MOD"
	}
	if fm.Command >= 3 {
		fl.Cookie = 0 // a delete's cookie is a match, printed below
	}
	if mask != 0 {
		fl.Cookie = 0
	}
	body := ofptext.FormatFlowMod(fl)
	// ovs-ofctl prints a cookie match right after the match (the new
	// cookie of an add is not printed then), and a delete's out_port
	// after the timeouts.
	if mask != 0 {
		body = insertAfterMatch(body, fmt.Sprintf("cookie:%#x/%#x ", cookie, mask), false)
	}
	anyPort := uint32(ofp.PortAny16)
	if fm.Format == ofp.FormatOXM {
		anyPort = 0xffffffff
	}
	if fm.OutPort != anyPort {
		if fm.OutPort >= 0xff00 && fm.OutPort < 0x10000 || fm.OutPort >= 0xffffff00 {
			return fmt.Errorf("flow mod out_port %#x: %w", fm.OutPort, errNotPrinted)
		}
		body = insertAfterMatch(body, fmt.Sprintf("out_port:%d ", fm.OutPort), true)
	}
	if fm.Format == ofp.FormatOXM && fm.OutGroup != 0xffffffff {
		return fmt.Errorf("flow mod out_group %d: %w", fm.OutGroup, errNotPrinted)
	}
	if fm.TableID == ofptext.TableUnset {
		// All tables (a delete's 0xff); FormatFlowMod omits it.
		body = "table:255 " + body
	}
	header(w, name, m)
	fmt.Fprintf(w, " %s %s\n", flowModCommands[fm.Command], body)
	return nil
}

// insertAfterMatch inserts s before the first field FormatFlowMod prints
// after the match (timeouts, importance, flags, actions), or with
// afterTimeouts before the first after the timeouts and importance.
func insertAfterMatch(body, s string, afterTimeouts bool) string {
	best := len(body)
	keys := []string{"idle:", "hard:", "importance:", "send_flow_rem ", "check_overlap ", "reset_counts ", "no_packet_counts ", "no_byte_counts ", "actions="}
	if afterTimeouts {
		keys = keys[3:]
	}
	for _, k := range keys {
		if i := strings.Index(body, k); i >= 0 && (i == 0 || body[i-1] == ' ') && i < best {
			best = i
		}
	}
	return body[:best] + s + body[best:]
}

// hexDumpPlain prints b like HexDump without the printable-characters
// column and without trailing spaces, as ovs-ofctl dumps packet data.
func hexDumpPlain(w *bufio.Writer, b []byte) {
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		var sb strings.Builder
		fmt.Fprintf(&sb, "%08x  ", off)
		for i, c := range line {
			sep := byte(' ')
			if i == 7 {
				sep = '-'
			}
			fmt.Fprintf(&sb, "%02x%c", c, sep)
		}
		w.WriteString(strings.TrimRight(sb.String(), " "))
		w.WriteByte('\n')
	}
}

// HexDump prints b as ovs-ofctl does: offset, 16 bytes with a '-' after
// the eighth, then the printable characters between bars.
func HexDump(w *bufio.Writer, b []byte) {
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		fmt.Fprintf(w, "%08x  ", off)
		for i := 0; i < 16; i++ {
			if i < len(line) {
				sep := byte(' ')
				if i == 7 {
					sep = '-'
				}
				fmt.Fprintf(w, "%02x%c", line[i], sep)
			} else {
				w.WriteString("   ")
			}
		}
		w.WriteByte('|')
		for i := 0; i < 16; i++ {
			c := byte(' ')
			if i < len(line) {
				c = line[i]
				if c < 0x20 || c >= 0x7f {
					c = '.'
				}
			}
			w.WriteByte(c)
		}
		w.WriteString("|\n")
	}
}

// FormatMessage is Open vSwitch's ofp_to_string: message b as ovs-ofctl
// prints it at verbosity (the vconn debug log uses 1), or, for the types
// gvs-ofctl cannot print, its type and a hex dump; it ends in a newline.
func FormatMessage(b []byte, verbosity int) string {
	var sb strings.Builder
	w := bufio.NewWriter(&sb)
	Any(w, b, verbosity)
	w.Flush()
	return sb.String()
}

// Any prints a message in ovs-ofctl's format, or, for the types
// gvs-ofctl cannot print yet, its type and a hex dump.
func Any(w *bufio.Writer, b []byte, verbosity int) {
	var sb strings.Builder
	tmp := bufio.NewWriter(&sb)
	err := MessageV(tmp, b, verbosity)
	tmp.Flush()
	if err == nil {
		w.WriteString(sb.String())
		return
	}
	if m, derr := ofp.Decode(b); derr == nil {
		header(w, m.Raw.String(), m)
		fmt.Fprintf(w, " (%v)\n", err)
	} else {
		fmt.Fprintf(w, "OpenFlow message (%d bytes): %v\n", len(b), derr)
	}
	HexDump(w, b)
}

// VersionTag is the " (OF1.x)" ovs-ofctl prints after a message name for
// versions other than OpenFlow 1.0.
func VersionTag(v uint8) string {
	if v == mf.OF10 {
		return ""
	}
	return fmt.Sprintf(" (OF1.%d)", v-1)
}
