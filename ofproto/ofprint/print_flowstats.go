package ofprint

import (
	"bufio"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// ofp-print's printers for flow and aggregate statistics, bundled
// messages and conntrack zone flushes. dump-flows and dump-aggregate
// print their replies with the same functions.

func init() {
	for body, p := range map[ofp.Message]msgPrinter{
		&ofp.FlowStatsRequest{}: printFlowStatsRequest,
		&ofp.FlowStatsReply{}: func(w *bufio.Writer, m *ofp.Msg) error {
			rep := m.Body.(*ofp.FlowStatsReply)
			entries, err := FlowStatsEntries(m, rep)
			if err != nil {
				return err
			}
			FlowStatsEntriesTo(w, m, rep, entries)
			return nil
		},
		&ofp.AggregateStatsReply{}: AggregateReply,
		&ofp.CTFlush{}:             printCTFlush,
		&ofp.CTFlushZone{}: func(w *bufio.Writer, m *ofp.Msg) error {
			header(w, "NXT_CT_FLUSH_ZONE", m)
			fmt.Fprintf(w, " zone_id=%d\n", m.Body.(*ofp.CTFlushZone).Zone)
			return nil
		},
	} {
		printers[kindOf(body)] = p
	}
	verbosePrinters[kindOf(&ofp.BundleAdd{})] = printBundleAdd
}

// flowStatsName is a flow or aggregate statistics message's name:
// NXST_ for the Nicira (NXM) form.
func flowStatsName(f ofp.FlowFormat, name string) string {
	if f == ofp.FormatNXM {
		return "NXST_" + name
	}
	return "OFPST_" + name
}

func printFlowStatsRequest(w *bufio.Writer, m *ofp.Msg) error {
	r := m.Body.(*ofp.FlowStatsRequest)
	name := "FLOW request"
	if r.Aggregate {
		name = "AGGREGATE request"
	}
	header(w, flowStatsName(r.Format, name), m)
	printStatsFlags(w, r.Flags, true, m.Version)
	var parts []string
	if r.TableID != 0xff {
		parts = append(parts, fmt.Sprintf("table=%d", r.TableID))
	}
	out := r.OutPort
	if r.Format != ofp.FormatOXM {
		out = ofp.PortToOF11(uint16(out))
	}
	if out != ofp.PortAny {
		parts = append(parts, "out_port="+portName(out))
	}
	if s := ofptext.FormatMatch(&r.Match, ofptext.DefaultPriority); s != "" {
		parts = append(parts, s)
	}
	for _, p := range parts {
		w.WriteString(" " + p)
	}
	w.WriteByte('\n')
	return nil
}

// FlowStatsEntries decodes the actions of a flow stats reply's entries.
func FlowStatsEntries(m *ofp.Msg, rep *ofp.FlowStatsReply) ([]FlowEntry, error) {
	entries := make([]FlowEntry, 0, len(rep.Stats))
	for i := range rep.Stats {
		s := &rep.Stats[i]
		acts, err := ofp.DecodeOfpacts(s.Actions, m.Version, rep.Format == ofp.FormatOXM)
		if err != nil {
			return nil, fmt.Errorf("decoding flow stats reply: %w", err)
		}
		entries = append(entries, FlowEntry{s, acts, m.Version})
	}
	return entries, nil
}

// FlowStatsEntriesTo prints a flow stats reply as ovs-ofctl does, a
// line per flow with its statistics.
func FlowStatsEntriesTo(w *bufio.Writer, m *ofp.Msg, rep *ofp.FlowStatsReply, entries []FlowEntry) {
	header(w, flowStatsName(rep.Format, "FLOW reply"), m)
	printStatsFlags(w, rep.Flags, false, m.Version)
	for _, fe := range entries {
		w.WriteString("\n " + fe.Format(true))
	}
	w.WriteByte('\n')
}

// AggregateReply prints an aggregate statistics reply.
func AggregateReply(w *bufio.Writer, m *ofp.Msg) error {
	rep := m.Body.(*ofp.AggregateStatsReply)
	header(w, flowStatsName(rep.Format, "AGGREGATE reply"), m)
	printStatsFlags(w, rep.Flags, false, m.Version)
	fmt.Fprintf(w, " packet_count=%d byte_count=%d flow_count=%d\n", rep.PacketCount, rep.ByteCount, rep.FlowCount)
	return nil
}

var bundleFlagNames = []string{"atomic", "ordered"}

// printBundleAdd prints a bundled message after the bundle's id and
// flags, at the verbosity of the whole.
func printBundleAdd(w *bufio.Writer, m *ofp.Msg, verbosity int) error {
	ba := m.Body.(*ofp.BundleAdd)
	if ba.Inner == nil || ba.InnerErr != nil || len(ba.Properties) != 0 {
		return fmt.Errorf("bundled message: %w", errNotPrinted)
	}
	// The bundled message first, so that nothing is printed if it
	// cannot be.
	var inner strings.Builder
	iw := bufio.NewWriter(&inner)
	if err := MessageV(iw, ba.Msg, verbosity); err != nil {
		return err
	}
	iw.Flush()
	name := "OFPT_BUNDLE_ADD_MESSAGE"
	if m.Version < mf.OF14 {
		name = "ONFT_BUNDLE_ADD_MESSAGE"
	}
	header(w, name, m)
	var flags strings.Builder
	writeBitNames(&flags, uint32(ba.Flags), bundleFlagNames, " ")
	fmt.Fprintf(w, "\n bundle_id=%s flags=%s\n%s", hex0x(uint64(ba.BundleID)), flags.String(), inner.String())
	return nil
}

// ctTupleAddr prints a conntrack tuple address as Open vSwitch's
// ipv6_format_mapped: IPv4-mapped addresses in dotted quads.
func ctTupleAddr(a [16]byte) string { return netip.AddrFrom16(a).Unmap().String() }

// ctFlushIPv4 reports whether a flush's tuples are IPv4: the first
// address that is set decides, as Open vSwitch decodes them.
func ctFlushIPv4(f *ofp.CTFlush) bool {
	for _, a := range [...][16]byte{f.Orig.Src, f.Orig.Dst, f.Reply.Src, f.Reply.Dst} {
		if a != ([16]byte{}) {
			return netip.AddrFrom16(a).Is4In6()
		}
	}
	return false
}

func ctTupleString(t *ofp.CTTuple, proto uint8, ipv4 bool) string {
	names := [2]string{"ct_ipv6_src=", ",ct_ipv6_dst="}
	if ipv4 {
		names = [2]string{"ct_nw_src=", ",ct_nw_dst="}
	}
	s := names[0] + ctTupleAddr(t.Src) + names[1] + ctTupleAddr(t.Dst)
	if proto == 1 || proto == 58 { // ICMP, ICMPv6
		return s + fmt.Sprintf(",icmp_id=%d,icmp_type=%d,icmp_code=%d", t.ICMPID, t.ICMPType, t.ICMPCode)
	}
	return s + fmt.Sprintf(",ct_tp_src=%d,ct_tp_dst=%d", t.SrcPort, t.DstPort)
}

func printCTFlush(w *bufio.Writer, m *ofp.Msg) error {
	f := m.Body.(*ofp.CTFlush)
	v4 := ctFlushIPv4(f)
	header(w, "NXT_CT_FLUSH", m)
	fmt.Fprintf(w, " zone=%d '%s,ct_nw_proto=%d' '%s'\n", f.Zone, ctTupleString(&f.Orig, f.IPProto, v4), f.IPProto, ctTupleString(&f.Reply, f.IPProto, v4))
	return nil
}
