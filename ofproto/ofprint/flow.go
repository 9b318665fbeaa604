package ofprint

import (
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// FlowEntry is one decoded flow stats entry.
type FlowEntry struct {
	Stats   *ofp.FlowStats
	Actions []ofp.Action
	Version uint8 // the OpenFlow version the actions are printed in
}

// Format prints the entry as ovs-ofctl's flow stats formatter.
func (fe FlowEntry) Format(stats bool) string {
	s := fe.Stats
	var sb strings.Builder
	if stats || s.Cookie != 0 {
		fmt.Fprintf(&sb, "cookie=%#x, ", s.Cookie)
	}
	if stats {
		sb.WriteString("duration=" + exactDuration(s.DurationSec, s.DurationNsec) + ", ")
	}
	if stats || s.TableID != 0 {
		fmt.Fprintf(&sb, "table=%d, ", s.TableID)
	}
	if stats {
		fmt.Fprintf(&sb, "n_packets=%d, n_bytes=%d, ", s.PacketCount, s.ByteCount)
	}
	if s.IdleTimeout != 0 {
		fmt.Fprintf(&sb, "idle_timeout=%d, ", s.IdleTimeout)
	}
	if s.HardTimeout != 0 {
		fmt.Fprintf(&sb, "hard_timeout=%d, ", s.HardTimeout)
	}
	for i, name := range []string{"send_flow_rem", "check_overlap", "reset_counts", "no_packet_counts", "no_byte_counts"} {
		if s.Flags&(1<<i) != 0 {
			sb.WriteString(name + " ")
		}
	}
	if s.Importance != 0 {
		fmt.Fprintf(&sb, "importance=%d, ", s.Importance)
	}
	if stats && s.IdleAge >= 0 {
		fmt.Fprintf(&sb, "idle_age=%d, ", s.IdleAge)
	}
	if stats && s.HardAge >= 0 && s.HardAge != int(s.DurationSec) {
		fmt.Fprintf(&sb, "hard_age=%d, ", s.HardAge)
	}
	if m := ofptext.FormatMatch(&s.Match, s.Priority); m != "" {
		sb.WriteString(m + " ")
	}
	sb.WriteString("actions=" + ofptext.FormatActions(fe.Actions, fe.Version))
	return sb.String()
}
