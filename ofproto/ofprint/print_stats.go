package ofprint

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// ofp-print's printers for configuration and statistics messages: table
// and port descriptions and statistics, queues, port and table mods,
// session settings, role status and request forwarding. The online
// commands (dump-tables, dump-ports-desc, show) print their replies with
// the same functions.

func init() {
	for body, p := range map[ofp.Message]msgPrinter{
		&ofp.TableStatsRequest{}:     statsHeaderOnly("TABLE request"),
		&ofp.TableStatsReply{}:       printTableStatsMsg,
		&ofp.PortDescRequest{}:       printPortDescRequest,
		&ofp.PortDescReply{}:         PortDescReply,
		&ofp.TableDescRequest{}:      statsHeaderOnly("TABLE_DESC request"),
		&ofp.TableDescReply{}:        printTableDescReply,
		&ofp.TableStatus{}:           printTableStatus,
		&ofp.PortMod{}:               printPortMod,
		&ofp.TableMod{}:              printTableMod,
		&ofp.QueueStatsRequest{}:     printQueueStatsRequest,
		&ofp.QueueStatsReply{}:       printQueueStatsReply,
		&ofp.QueueGetConfigRequest{}: printQueueGetConfigRequest,
		&ofp.QueueGetConfigReply{}:   printQueueGetConfigReply,
		&ofp.SetFlowFormat{}:         printSetFlowFormat,
		&ofp.FlowModTableID{}:        printFlowModTableID,
		&ofp.RoleStatus{}:            printRoleStatus,
		&ofp.RequestForward{}:        printRequestForward,
	} {
		printers[kindOf(body)] = p
	}
}

// statsFlagsOf returns a multipart message's flags and whether it is a
// request.
func statsFlagsOf(b ofp.Message) (flags uint16, request bool) {
	switch b := b.(type) {
	case *ofp.TableStatsRequest:
		return b.Flags, true
	case *ofp.TableStatsReply:
		return b.Flags, false
	case *ofp.PortDescRequest:
		return b.Flags, true
	case *ofp.PortDescReply:
		return b.Flags, false
	case *ofp.TableDescRequest:
		return b.Flags, true
	case *ofp.TableDescReply:
		return b.Flags, false
	case *ofp.QueueStatsRequest:
		return b.Flags, true
	case *ofp.QueueStatsReply:
		return b.Flags, false
	case *ofp.PortStatsRequest:
		return b.Flags, true
	case *ofp.PortStatsReply:
		return b.Flags, false
	case *ofp.DescStatsRequest:
		return b.Flags, true
	case *ofp.DescStatsReply:
		return b.Flags, false
	}
	return 0, false
}

// statsHeader prints a multipart message's header line up to its flags,
// as every ovs-ofctl multipart printer starts.
func statsHeader(w *bufio.Writer, name string, m *ofp.Msg) {
	header(w, "OFPST_"+name, m)
	flags, request := statsFlagsOf(m.Body)
	printStatsFlags(w, flags, request, m.Version)
}

func statsHeaderOnly(name string) msgPrinter {
	return func(w *bufio.Writer, m *ofp.Msg) error {
		statsHeader(w, name, m)
		w.WriteByte('\n')
		return nil
	}
}

func printTableStatsMsg(w *bufio.Writer, m *ofp.Msg) error {
	TableStatsReply(w, m, m.Body.(*ofp.TableStatsReply))
	return nil
}

func printPortDescRequest(w *bufio.Writer, m *ofp.Msg) error {
	statsHeader(w, "PORT_DESC request", m)
	fmt.Fprintf(w, " port=%s\n", portName(m.Body.(*ofp.PortDescRequest).PortNo))
	return nil
}

// PortDescReply prints a port description reply.
func PortDescReply(w *bufio.Writer, m *ofp.Msg) error {
	statsHeader(w, "PORT_DESC reply", m)
	w.WriteByte('\n')
	printPorts(w, m.Version, m.Body.(*ofp.PortDescReply).Ports)
	return nil
}

// Table eviction and vacancy settings as ovs-ofctl names them; a table
// mod's eviction property lands in the setting itself in Open vSwitch
// 3.1, so any value can appear.
var tableEvictionNames = []string{"default", "on", "off"}

func tableSetting(v uint32) string {
	if int(v) < len(tableEvictionNames) {
		return tableEvictionNames[v]
	}
	return "***error***"
}

const (
	tableSettingDefault = 0
	tableSettingOn      = 1
	tableSettingOff     = 2
)

// onOff is the eviction or vacancy setting a 1.4+ config bit gives.
func onOff(config, bit uint32) uint32 {
	if config&bit != 0 {
		return tableSettingOn
	}
	return tableSettingOff
}

var (
	tableMissNames     = []string{"controller", "continue", "drop", "controller"}
	evictionFlagsNames = []string{"OTHER", "IMPORTANCE", "LIFETIME"}
)

// writeBitNames writes bits as Open vSwitch's ofp_print_bit_names: the
// set bits' names joined by sep, then the unnamed bits together in hex;
// "0" for none.
func writeBitNames(sb *strings.Builder, bits uint32, names []string, sep string) {
	if bits == 0 {
		sb.WriteString("0")
		return
	}
	var parts []string
	var unnamed uint32
	for i := 0; i < 32; i++ {
		switch {
		case bits&(1<<i) == 0:
		case i < len(names):
			parts = append(parts, names[i])
		default:
			unnamed |= 1 << i
		}
	}
	if unnamed != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", unnamed))
	}
	sb.WriteString(strings.Join(parts, sep))
}

func printTableMod(w *bufio.Writer, m *ofp.Msg) error {
	tm := m.Body.(*ofp.TableMod)
	var sb strings.Builder
	if tm.TableID == 0xff {
		sb.WriteString(" table_id: ALL_TABLES")
	} else {
		fmt.Fprintf(&sb, " table_id=%d", tm.TableID)
	}
	if miss, ok := tm.MissConfig(m.Version); ok {
		sb.WriteString(", flow_miss_config=" + tableMissNames[miss])
	}
	eviction, vacancy := uint32(tableSettingDefault), uint32(tableSettingDefault)
	if m.Version >= mf.OF14 {
		eviction = onOff(tm.Config, ofp.TableConfigEviction)
		vacancy = onOff(tm.Config, ofp.TableConfigVacancyEvents)
		if tm.EvictionFlags != nil {
			eviction = *tm.EvictionFlags
		}
	}
	if eviction != tableSettingDefault {
		sb.WriteString(", eviction=" + tableSetting(eviction))
	}
	if vacancy != tableSettingDefault {
		sb.WriteString(", vacancy=" + tableSetting(vacancy))
		if vacancy == tableSettingOn {
			var v ofp.TableVacancy
			if tm.Vacancy != nil {
				v = *tm.Vacancy
			}
			fmt.Fprintf(&sb, " vacancy:%d,%d", v.Down, v.Up)
		}
	}
	header(w, "OFPT_TABLE_MOD", m)
	w.WriteString(sb.String() + "\n")
	return nil
}

func printTableDescReply(w *bufio.Writer, m *ofp.Msg) error {
	r := m.Body.(*ofp.TableDescReply)
	statsHeader(w, "TABLE_DESC reply", m)
	for _, td := range r.Tables {
		var sb strings.Builder
		formatTableDesc(&sb, td)
		w.WriteString(sb.String())
	}
	if len(r.Tables) == 0 {
		w.WriteByte('\n')
	}
	return nil
}

// printTableStatus prints OFPT_TABLE_STATUS: the reason, then the
// table's description as a table description reply prints it.
func printTableStatus(w *bufio.Writer, m *ofp.Msg) error {
	ts := m.Body.(*ofp.TableStatus)
	header(w, "OFPT_TABLE_STATUS", m)
	switch ts.Reason {
	case ofp.TableReasonVacancyDown:
		w.WriteString(" reason=VACANCY_DOWN")
	case ofp.TableReasonVacancyUp:
		w.WriteString(" reason=VACANCY_UP")
	}
	var sb strings.Builder
	sb.WriteString("\ntable_desc:-")
	formatTableDesc(&sb, ts.Desc)
	w.WriteString(sb.String())
	return nil
}

// formatTableDesc is one table's description (ofputil_table_desc_format).
func formatTableDesc(sb *strings.Builder, td ofp.TableDesc) {
	fmt.Fprintf(sb, "\n  table %d:\n   eviction=%s eviction_flags=", td.TableID, tableSetting(onOff(td.Config, ofp.TableConfigEviction)))
	if td.EvictionFlags != nil {
		writeBitNames(sb, *td.EvictionFlags, evictionFlagsNames, "|")
	} else {
		sb.WriteString("(default)")
	}
	vacancy := onOff(td.Config, ofp.TableConfigVacancyEvents)
	sb.WriteString("\n   vacancy=" + tableSetting(vacancy))
	if vacancy == tableSettingOn {
		var v ofp.TableVacancy
		if td.Vacancy != nil {
			v = *td.Vacancy
		}
		fmt.Fprintf(sb, " vacancy_down=%d%% vacancy_up=%d%% vacancy=%d%%", v.Down, v.Up, v.Vacancy)
	}
	sb.WriteString("\n")
}

func printPortMod(w *bufio.Writer, m *ofp.Msg) error {
	pm := m.Body.(*ofp.PortMod)
	header(w, "OFPT_PORT_MOD", m)
	a := pm.HWAddr
	fmt.Fprintf(w, " port: %s: addr:%02x:%02x:%02x:%02x:%02x:%02x\n", portName(pm.PortNo), a[0], a[1], a[2], a[3], a[4], a[5])
	w.WriteString("     config: ")
	bitNames(w, pm.Config&pm.Mask, portConfigNames) // Open vSwitch drops unmasked bits
	w.WriteString("     mask:   ")
	bitNames(w, pm.Mask, portConfigNames)
	w.WriteString("     advertise: ")
	if pm.Advertise == 0 {
		w.WriteString("UNCHANGED\n")
	} else {
		bitNames(w, features11(pm.Advertise, m.Version), featureNames)
	}
	return nil
}

// queueName prints a queue id, ALL for every queue.
func queueName(q uint32) string {
	if q == ofp.QueueAll {
		return "ALL"
	}
	return strconv.FormatUint(uint64(q), 10)
}

func printQueueStatsRequest(w *bufio.Writer, m *ofp.Msg) error {
	r := m.Body.(*ofp.QueueStatsRequest)
	statsHeader(w, "QUEUE request", m)
	fmt.Fprintf(w, " port=%s queue=%s\n", portName(r.PortNo), queueName(r.QueueID))
	return nil
}

func printQueueStatsReply(w *bufio.Writer, m *ofp.Msg) error {
	r := m.Body.(*ofp.QueueStatsReply)
	statsHeader(w, "QUEUE reply", m)
	fmt.Fprintf(w, " %d queues\n", len(r.Stats))
	for _, qs := range r.Stats {
		dur := "?"
		if qs.DurationSec != ^uint32(0) {
			dur = exactDuration(qs.DurationSec, qs.DurationNsec)
		}
		fmt.Fprintf(w, "  port %s queue %s: bytes=%s, pkts=%s, errors=%s, duration=%s\n", portName(qs.PortNo), queueName(qs.QueueID),
			counter(qs.TxBytes), counter(qs.TxPackets), counter(qs.TxErrors), dur)
	}
	return nil
}

// validPort32 reports whether p is a port number OpenFlow 1.1+ can
// carry: below 0xff00 or in the reserved range from 0xffffff00.
func validPort32(p uint32) bool {
	_, err := ofp.PortFromOF11(p)
	return err == nil
}

// portDecodeError returns the error ovs-ofctl reports for a request
// whose port ofp accepts but Open vSwitch refuses, and the name its
// header line is printed with: an OpenFlow 1.1+ port number between the
// 16-bit range and the reserved ports, or a queue configuration request
// for a reserved port (OpenFlow 1.0: any; 1.1 to 1.3: other than ANY).
func portDecodeError(m *ofp.Msg) (name, code string, bad bool) {
	const badOutPort, badQueuePort = "OFPBAC_BAD_OUT_PORT", "OFPQOFC_BAD_PORT"
	v := m.Version
	switch b := m.Body.(type) {
	case *ofp.QueueGetConfigRequest:
		if m.Raw == ofp.RawOFPST14_QUEUE_DESC_REQUEST {
			return "QUEUE_DESC request", badOutPort, !validPort32(b.PortNo)
		}
		name = "OFPT_QUEUE_GET_CONFIG_REQUEST"
		switch {
		case v > mf.OF10 && !validPort32(b.PortNo):
			return name, badOutPort, true
		case v > mf.OF10 && b.PortNo == ofp.PortAny:
			return name, "", false
		}
		return name, badQueuePort, port16(b.PortNo) >= 0xff00
	case *ofp.QueueStatsRequest:
		return "QUEUE request", badOutPort, v > mf.OF10 && !validPort32(b.PortNo)
	case *ofp.PortDescRequest:
		return "PORT_DESC request", badOutPort, !validPort32(b.PortNo)
	case *ofp.PortMod:
		return "OFPT_PORT_MOD", badOutPort, v > mf.OF10 && !validPort32(b.PortNo)
	}
	return "", "", false
}

// printPortDecodeError prints a message portDecodeError refuses as
// ovs-ofctl does, the error and a hex dump of raw, and reports whether
// it did.
func printPortDecodeError(w *bufio.Writer, m *ofp.Msg, raw []byte) bool {
	name, code, bad := portDecodeError(m)
	if !bad {
		return false
	}
	sep := " "
	if strings.HasPrefix(name, "OFPT_") {
		header(w, name, m)
	} else {
		statsHeader(w, name, m)
		if flags, _ := statsFlagsOf(m.Body); flags != 0 {
			sep = "\n" // after the flags the error takes a line
		}
	}
	fmt.Fprintf(w, "%s***decode error: %s***\n", sep, code)
	HexDump(w, raw)
	return true
}

func printQueueGetConfigRequest(w *bufio.Writer, m *ofp.Msg) error {
	r := m.Body.(*ofp.QueueGetConfigRequest)
	if m.Raw == ofp.RawOFPST14_QUEUE_DESC_REQUEST {
		statsHeader(w, "QUEUE_DESC request", m)
	} else {
		header(w, "OFPT_QUEUE_GET_CONFIG_REQUEST", m)
	}
	fmt.Fprintf(w, " port=%s", portName(r.PortNo))
	if r.QueueID != ofp.QueueAll {
		w.WriteString(" queue=" + queueName(r.QueueID))
	}
	w.WriteByte('\n')
	return nil
}

// queueRate prints a queue's rate in tenths of a percent as ovs-ofctl
// does; 0xffff is unset.
func queueRate(name string, rate uint16) string {
	switch {
	case rate <= 1000:
		return fmt.Sprintf(" %s:%d.%d%%", name, rate/10, rate%10)
	case rate == 0xffff:
		return ""
	}
	return " " + name + ":(disabled)"
}

// port16 is the OpenFlow 1.0 number ovs-ofctl sorts queues by.
func port16(p uint32) uint16 {
	if p16, err := ofp.PortFromOF11(p); err == nil {
		return p16
	}
	return uint16(p)
}

func printQueueGetConfigReply(w *bufio.Writer, m *ofp.Msg) error {
	r := m.Body.(*ofp.QueueGetConfigReply)
	desc := m.Raw == ofp.RawOFPST14_QUEUE_DESC_REPLY
	if desc {
		statsHeader(w, "QUEUE_DESC reply", m)
	} else {
		header(w, "OFPT_QUEUE_GET_CONFIG_REPLY", m)
	}
	queues := slices.Clone(r.Queues)
	if !desc {
		// Before OpenFlow 1.4 every queue is the asked-for port's.
		for i := range queues {
			queues[i].PortNo = r.PortNo
		}
	}
	slices.SortStableFunc(queues, func(a, b ofp.Queue) int {
		if pa, pb := port16(a.PortNo), port16(b.PortNo); pa != pb {
			return int(pa) - int(pb)
		}
		switch {
		case a.QueueID < b.QueueID:
			return -1
		case a.QueueID > b.QueueID:
			return 1
		}
		return 0
	})
	var sb strings.Builder
	sb.WriteByte(' ')
	port := uint32(0)
	for _, q := range queues {
		if q.PortNo != port {
			port = q.PortNo
			sb.WriteString("port=" + portName(port) + "\n")
		}
		fmt.Fprintf(&sb, "queue %d:%s%s\n", q.QueueID, queueRate("min_rate", q.MinRate), queueRate("max_rate", q.MaxRate))
	}
	// An empty reply ends with the header line.
	body := strings.TrimSuffix(sb.String(), " ")
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	w.WriteString(body)
	return nil
}

// flowFormatNames name NXT_SET_FLOW_FORMAT's formats.
var flowFormatNames = map[uint32]string{ofp.NXFFOpenFlow10: "openflow10", ofp.NXFFNXM: "nxm"}

func printSetFlowFormat(w *bufio.Writer, m *ofp.Msg) error {
	f := m.Body.(*ofp.SetFlowFormat).Format
	name, ok := flowFormatNames[f]
	if !ok {
		return fmt.Errorf("flow format %d: %w", f, errNotPrinted)
	}
	header(w, "NXT_SET_FLOW_FORMAT", m)
	fmt.Fprintf(w, " format=%s\n", name)
	return nil
}

func printFlowModTableID(w *bufio.Writer, m *ofp.Msg) error {
	header(w, "NXT_FLOW_MOD_TABLE_ID", m)
	if m.Body.(*ofp.FlowModTableID).Enable {
		w.WriteString(" enable\n")
	} else {
		w.WriteString(" disable\n")
	}
	return nil
}

// roleNames are OpenFlow 1.2+ controller roles as ovs-ofctl prints them.
var roleNames = []string{"nochange", "equal", "primary", "secondary"}

var roleStatusReasons = []string{"primary_request", "configuration_changed", "experimenter_data_changed"}

func printRoleStatus(w *bufio.Writer, m *ofp.Msg) error {
	rs := m.Body.(*ofp.RoleStatus)
	if int(rs.Role) >= len(roleNames) {
		return fmt.Errorf("role %d: %w", rs.Role, errNotPrinted)
	}
	name := "OFPT_ROLE_STATUS"
	if m.Version < mf.OF14 {
		name = "ONFT_ROLE_STATUS"
	}
	header(w, name, m)
	fmt.Fprintf(w, " role=%s", roleNames[rs.Role])
	if rs.GenerationID != ^uint64(0) {
		fmt.Fprintf(w, " generation_id=%d", rs.GenerationID)
	}
	reason := "(unknown)"
	if int(rs.Reason) < len(roleStatusReasons) {
		reason = roleStatusReasons[rs.Reason]
	}
	fmt.Fprintf(w, " reason=%s\n", reason)
	return nil
}

func printRequestForward(w *bufio.Writer, m *ofp.Msg) error {
	rf := m.Body.(*ofp.RequestForward)
	name := "OFPT_REQUESTFORWARD"
	switch {
	case m.Version == mf.OF13:
		name = "ONFT_REQUESTFORWARD"
	case m.Version < mf.OF13:
		name = "NXT_REQUESTFORWARD"
	}
	var body string
	switch inner := rf.Inner.(type) {
	case *ofp.GroupMod:
		body = " reason=group_mod\n " + ofptext.FormatGroupMod(inner, m.Version)
	case *ofp.MeterMod:
		body = " reason=meter_mod " + ofptext.FormatMeterMod(inner)
	default:
		return fmt.Errorf("request forward of %T: %w", rf.Inner, errNotPrinted)
	}
	header(w, name, m)
	w.WriteString(body + "\n")
	return nil
}
