package ofprint

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// ofp-print's printers for session messages (roles, asynchronous
// message configuration, packet-in format, controller id) and the
// switch description and port statistics the online commands share.

func init() {
	for body, p := range map[ofp.Message]msgPrinter{
		&ofp.RoleRequest{}:       printRoleRequest,
		&ofp.AsyncConfig{}:       printAsyncConfig,
		&ofp.GetAsyncRequest{}:   headerOnly("OFPT_GET_ASYNC_REQUEST"),
		&ofp.SetPacketInFormat{}: printSetPacketInFormat,
		&ofp.SetControllerID{}: func(w *bufio.Writer, m *ofp.Msg) error {
			header(w, "NXT_SET_CONTROLLER_ID", m)
			fmt.Fprintf(w, " id=%d\n", m.Body.(*ofp.SetControllerID).ID)
			return nil
		},
		&ofp.FlowAgeExt{}:       headerOnly("NXT_FLOW_AGE"),
		&ofp.DescStatsRequest{}: statsHeaderOnly("DESC request"),
		&ofp.DescStatsReply{}:   DescReply,
		&ofp.PortStatsRequest{}: printPortStatsRequest,
		&ofp.PortStatsReply{}: func(w *bufio.Writer, m *ofp.Msg) error {
			return PortStatsReply(w, m, m.Body.(*ofp.PortStatsReply))
		},
	} {
		printers[kindOf(body)] = p
	}
}

func printRoleRequest(w *bufio.Writer, m *ofp.Msg) error {
	rr := m.Body.(*ofp.RoleRequest)
	role := rr.OFRole()
	if int(role) >= len(roleNames) || rr.Nicira && rr.Role > ofp.NXRoleSlave {
		return fmt.Errorf("role %d: %w", rr.Role, errNotPrinted)
	}
	name := "OFPT_ROLE_"
	if rr.Nicira {
		name = "NXT_ROLE_"
	}
	if rr.Reply {
		name += "REPLY"
	} else {
		name += "REQUEST"
	}
	header(w, name, m)
	fmt.Fprintf(w, " role=%s", roleNames[role])
	// Nicira roles have no generation id; a request that keeps the role
	// ignores it.
	if !rr.Nicira && !(role == ofp.RoleNoChange && !rr.Reply) && rr.GenerationID != ^uint64(0) {
		fmt.Fprintf(w, " generation_id=%d", rr.GenerationID)
	}
	w.WriteByte('\n')
	return nil
}

// asyncKinds name the asynchronous message kinds and their reasons (by
// bit) as ovs-ofctl prints an asynchronous configuration.
var asyncKinds = [ofp.NumAsyncKinds]struct {
	name    string
	reasons []string
}{
	ofp.AsyncPacketIn:       {"PACKET_IN", packetInReasons},
	ofp.AsyncPortStatus:     {"PORT_STATUS", []string{"add", "delete", "modify"}},
	ofp.AsyncFlowRemoved:    {"FLOW_REMOVED", flowRemovedReasons},
	ofp.AsyncRoleStatus:     {"ROLE_STATUS", roleStatusReasons},
	ofp.AsyncTableStatus:    {"TABLE_STATUS", []string{3: "vacancy_down", 4: "vacancy_up"}},
	ofp.AsyncRequestForward: {"REQUESTFORWARD", []string{"group_mod_request", "meter_mod_request"}},
}

func printAsyncConfig(w *bufio.Writer, m *ofp.Msg) error {
	ac := m.Body.(*ofp.AsyncConfig)
	var name string
	switch {
	case ac.Reply:
		name = "OFPT_GET_ASYNC_REPLY"
	case ac.Nicira && m.Raw == ofp.RawNXT_SET_ASYNC_CONFIG2:
		name = "NXT_SET_ASYNC_CONFIG2"
	case ac.Nicira:
		name = "NXT_SET_ASYNC_CONFIG"
	default:
		name = "OFPT_SET_ASYNC"
	}
	header(w, name, m)
	for i, masks := range [2]*[ofp.NumAsyncKinds]uint32{&ac.Master, &ac.Slave} {
		fmt.Fprintf(w, "\n %s:\n", [2]string{"primary", "secondary"}[i])
		for k, kind := range asyncKinds {
			fmt.Fprintf(w, "%16s:", kind.name)
			bits := masks[k]
			for j := 0; j < 32; j++ {
				if bits&(1<<j) == 0 {
					continue
				}
				if j < len(kind.reasons) && kind.reasons[j] != "" {
					w.WriteString(" " + kind.reasons[j])
				} else {
					w.WriteString(" " + strconv.Itoa(j))
				}
			}
			if bits == 0 {
				w.WriteString(" (off)")
			}
			w.WriteByte('\n')
		}
	}
	return nil
}

// packetInFormatNames name NXT_SET_PACKET_IN_FORMAT's formats.
var packetInFormatNames = []string{ofp.PacketInStandard: "standard", ofp.PacketInNXT: "nxt_packet_in", ofp.PacketIn2: "nxt_packet_in2"}

func printSetPacketInFormat(w *bufio.Writer, m *ofp.Msg) error {
	f := m.Body.(*ofp.SetPacketInFormat).Format
	if int(f) >= len(packetInFormatNames) {
		return fmt.Errorf("packet-in format %d: %w", f, errNotPrinted)
	}
	header(w, "NXT_SET_PACKET_IN_FORMAT", m)
	fmt.Fprintf(w, " format=%s\n", packetInFormatNames[f])
	return nil
}

// DescReply prints a switch description reply.
func DescReply(w *bufio.Writer, m *ofp.Msg) error {
	d := m.Body.(*ofp.DescStatsReply)
	statsHeader(w, "DESC reply", m)
	fmt.Fprintf(w, "\nManufacturer: %s\nHardware: %s\nSoftware: %s\nSerial Num: %s\nDP Description: %s\n",
		d.MfrDesc, d.HWDesc, d.SWDesc, d.SerialNum, d.DPDesc)
	return nil
}

func printPortStatsRequest(w *bufio.Writer, m *ofp.Msg) error {
	statsHeader(w, "PORT request", m)
	fmt.Fprintf(w, " port_no=%s\n", portName(m.Body.(*ofp.PortStatsRequest).PortNo))
	return nil
}

// PortStatsReply prints a port stats reply as ovs-ofctl does.
// OpenFlow 1.4+ replies carrying extra (custom statistics) properties
// are not printed yet.
func PortStatsReply(w *bufio.Writer, m *ofp.Msg, r *ofp.PortStatsReply) error {
	customs := make([]string, len(r.Stats))
	for i, s := range r.Stats {
		c, ok := customStats(s.ExtraProps)
		if !ok {
			return fmt.Errorf("%s with statistics properties: %w", m.Raw, errNotPrinted)
		}
		customs[i] = c
	}
	statsHeader(w, "PORT reply", m)
	fmt.Fprintf(w, " %d ports\n", len(r.Stats))
	for i, s := range r.Stats {
		w.WriteString("  port ")
		if s.PortNo < 10 {
			w.WriteByte(' ')
		}
		fmt.Fprintf(w, "%s: rx pkts=%s, bytes=%s, drop=%s, errs=%s, frame=%s, over=%s, crc=%s\n", portName(s.PortNo),
			counter(s.RxPackets), counter(s.RxBytes), counter(s.RxDropped), counter(s.RxErrors),
			counter(s.RxFrameErr), counter(s.RxOverErr), counter(s.RxCRCErr))
		fmt.Fprintf(w, "           tx pkts=%s, bytes=%s, drop=%s, errs=%s, coll=%s\n",
			counter(s.TxPackets), counter(s.TxBytes), counter(s.TxDropped), counter(s.TxErrors), counter(s.Collisions))
		if m.Version >= mf.OF13 && s.DurationSec != ^uint32(0) {
			fmt.Fprintf(w, "           duration=%s\n", exactDuration(s.DurationSec, s.DurationNsec))
		}
		w.WriteString(customs[i])
	}
	return nil
}

// Open vSwitch's Intel experimenter port statistics properties.
const (
	intelVendorID    = 0x0000aa01
	intelRFC2819     = 1 // RFC 2819 packet size counters
	intelCustomStats = 2 // named counters of the netdev
)

// customStats formats a port's OpenFlow 1.4+ statistics properties
// after the ethernet one as ovs-ofctl does: the custom counters three to
// a line. ok is false for properties it cannot print yet (RFC 2819
// counters that are available, other properties).
func customStats(props []byte) (s string, ok bool) {
	var sb strings.Builder
	for len(props) > 0 {
		if len(props) < 16 {
			return "", false
		}
		typ, n := binary.BigEndian.Uint16(props), int(binary.BigEndian.Uint16(props[2:]))
		padded := (n + 7) &^ 7
		if n < 16 || padded > len(props) || typ != 0xffff || binary.BigEndian.Uint32(props[4:]) != intelVendorID {
			return "", false
		}
		body := props[16:n]
		switch binary.BigEndian.Uint32(props[8:]) {
		case intelRFC2819:
			for i := 0; i+8 <= len(body); i += 8 {
				if binary.BigEndian.Uint64(body[i:]) != ^uint64(0) {
					return "", false
				}
			}
		case intelCustomStats:
			count := int(binary.BigEndian.Uint16(props[14:]))
			sb.WriteString("           CUSTOM Statistics")
			for i := 0; i < count; i++ {
				if len(body) < 1 || len(body) < 1+int(body[0])+8 {
					return "", false
				}
				name := string(body[1 : 1+body[0]])
				value := binary.BigEndian.Uint64(body[1+body[0]:])
				body = body[1+int(body[0])+8:]
				if name == "" {
					continue
				}
				if i%3 == 0 {
					sb.WriteString("\n                      ")
				} else {
					sb.WriteByte(' ')
				}
				fmt.Fprintf(&sb, "%s=%d,", name, value)
			}
			sb.WriteByte('\n')
		default:
			return "", false
		}
		props = props[padded:]
	}
	return sb.String(), true
}
