package dpif

import (
	"fmt"
	"strings"
	"time"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
)

// tcpFlagChars are the characters `dpctl/dump-flows` prints for TCP flags
// in its "flags:" column, lowest bit first (FIN, SYN, RST, PSH, ACK, URG,
// ECE, CWR, NS).
var tcpFlagChars = []struct {
	bit uint16
	c   byte
}{
	{0x002, 'S'}, {0x001, 'F'}, {0x008, 'P'}, {0x004, 'R'}, {0x020, 'U'},
	{0x010, '.'}, {0x040, 'E'}, {0x080, 'C'}, {0x100, 'N'},
}

// FormatTCPFlags formats TCP flags as Open vSwitch's dump-flows does.
func FormatTCPFlags(flags uint16) string {
	var b strings.Builder
	for _, f := range tcpFlagChars {
		if flags&f.bit != 0 {
			b.WriteByte(f.c)
		}
	}
	return b.String()
}

// FormatFlow formats a megaflow as one line of `ovs-appctl
// dpctl/dump-flows` (verbose: as with -m, with the UFID and every field
// and mask).
func FormatFlow(f *Flow, now time.Time, verbose bool) string {
	var b strings.Builder
	if verbose {
		fmt.Fprintf(&b, "ufid:%s, ", f.UFID)
	}
	m := f.shownMatch()
	b.WriteString(m.Format(verbose))
	writeStats(&b, &f.Stats, now)
	if verbose {
		// "ovs" names the software datapath (as opposed to "tc" offload)
		// in this column; scripts filter on it.
		b.WriteString(", dp:ovs")
	}
	writeActions(&b, f.Actions)
	return b.String()
}

// writeStats appends ", packets:N, bytes:N, used:T[, flags:F]" as
// dpif_flow_stats_format.
func writeStats(b *strings.Builder, st *FlowStats, now time.Time) {
	fmt.Fprintf(b, ", packets:%d, bytes:%d, used:", st.Packets, st.Bytes)
	if st.Used.IsZero() {
		b.WriteString("never")
	} else {
		fmt.Fprintf(b, "%.3fs", max(now.Sub(st.Used), 0).Seconds())
	}
	if st.TCPFlags != 0 {
		b.WriteString(", flags:")
		b.WriteString(FormatTCPFlags(st.TCPFlags))
	}
}

// writeActions appends ", actions:A" ("drop" for none).
func writeActions(b *strings.Builder, a odp.Actions) {
	b.WriteString(", actions:")
	if len(a) == 0 {
		b.WriteString("drop")
	} else {
		b.WriteString(a.String())
	}
}

// FormatDumpLog is the dpif module's debug line for a flow a dump
// returned (log_flow_message "flow_dump"), after the datapath's name: the
// UFID, the key with its mask (Open vSwitch's "<empty>" for a terse dump,
// which carries only the UFID), the statistics and the actions.
func FormatDumpLog(f *Flow, now time.Time, terse bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "flow_dump ufid:%s ", f.UFID)
	if terse {
		b.WriteString("<empty>")
	} else {
		m := f.shownMatch()
		b.WriteString(m.Format(true))
	}
	writeStats(&b, &f.Stats, now)
	writeActions(&b, f.Actions)
	return b.String()
}

// FormatBridgeFlow formats a megaflow as one line of `ovs-appctl
// dpif/dump-flows`: with verbose the UFID (then a space) and every field
// with its mask; portName, when not nil, names the input port and the
// output actions' ports it knows.
func FormatBridgeFlow(f *Flow, now time.Time, verbose bool, portName func(uint32) (string, bool)) string {
	var b strings.Builder
	if verbose {
		fmt.Fprintf(&b, "ufid:%s ", f.UFID)
	}
	m := f.shownMatch()
	key := m.Format(verbose)
	if portName != nil {
		if n, ok := portName(m.Key.InPort); ok {
			key = strings.Replace(key, fmt.Sprintf("in_port(%d)", m.Key.InPort), "in_port("+n+")", 1)
		}
	}
	b.WriteString(key)
	writeStats(&b, &f.Stats, now)
	if portName == nil || len(f.Actions) == 0 {
		writeActions(&b, f.Actions)
		return b.String()
	}
	b.WriteString(", actions:")
	for i, a := range f.Actions {
		if i > 0 {
			b.WriteByte(',')
		}
		if n, ok := portName(a.Arg); ok && a.Kind == odp.KindOutput {
			b.WriteString(n)
		} else {
			b.WriteString(odp.Actions{a}.String())
		}
	}
	return b.String()
}

// shownMatch is the flow's match with the key dumps print: the key as
// installed (Shown) under the mask.
func (f *Flow) shownMatch() flow.Match {
	m := f.Match
	if f.Shown != nil {
		m.Key = *f.Shown
	}
	return m
}
