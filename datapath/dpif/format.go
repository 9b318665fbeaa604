package dpif

import (
	"fmt"
	"strings"
	"time"
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
	m := f.Match
	if f.Shown != nil {
		m.Key = *f.Shown
	}
	b.WriteString(m.Format(verbose))
	fmt.Fprintf(&b, ", packets:%d, bytes:%d, used:", f.Stats.Packets, f.Stats.Bytes)
	if f.Stats.Used.IsZero() {
		b.WriteString("never")
	} else {
		d := now.Sub(f.Stats.Used)
		if d < 0 {
			d = 0
		}
		fmt.Fprintf(&b, "%.3fs", d.Seconds())
	}
	if f.Stats.TCPFlags != 0 {
		b.WriteString(", flags:")
		b.WriteString(FormatTCPFlags(f.Stats.TCPFlags))
	}
	if verbose {
		// "ovs" names the software datapath (as opposed to "tc" offload)
		// in this column; scripts filter on it.
		b.WriteString(", dp:ovs")
	}
	b.WriteString(", actions:")
	if len(f.Actions) == 0 {
		b.WriteString("drop")
	} else {
		b.WriteString(f.Actions.String())
	}
	return b.String()
}
