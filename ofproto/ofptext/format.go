package ofptext

import (
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// FormatFlowMod prints fl as `ovs-ofctl parse-flows` prints the body of
// the flow mod it sends, after "ADD ": "table:N", the match with its
// priority, cookie, timeouts, importance (OpenFlow 1.4+), flags and
// "actions=...".
func FormatFlowMod(fl *Flow) string {
	var sb strings.Builder
	if fl.Table != TableUnset && fl.Table != 0 {
		fmt.Fprintf(&sb, "table:%d ", fl.Table)
	}
	if m := FormatMatch(&fl.Match, fl.Priority); m != "" {
		sb.WriteString(m)
		sb.WriteByte(' ')
	}
	if fl.Cookie != 0 && fl.Cookie != ^uint64(0) { // all-ones: "no new cookie"
		fmt.Fprintf(&sb, "cookie:%#x ", fl.Cookie)
	}
	if fl.IdleTimeout != 0 {
		fmt.Fprintf(&sb, "idle:%d ", fl.IdleTimeout)
	}
	if fl.HardTimeout != 0 {
		fmt.Fprintf(&sb, "hard:%d ", fl.HardTimeout)
	}
	if fl.Importance != 0 && fl.Version >= mf.OF14 {
		fmt.Fprintf(&sb, "importance:%d ", fl.Importance)
	}
	for _, k := range flagKeywords {
		if fl.Flags&k.flag != 0 {
			sb.WriteString(k.name + " ")
		}
	}
	sb.WriteString("actions=" + FormatActions(fl.Actions, fl.Version))
	return sb.String()
}

// FormatFlow prints fl as `ovs-ofctl dump-flows --no-stats` prints a flow
// the switch holds, without the one space ovs-ofctl indents each line by:
// non-default cookie, table and timeouts as "key=value, ", the flow-mod
// flags (OpenFlow 1.3+, where flow stats carry them), importance
// (OpenFlow 1.4+), then the match with its priority and the actions.
func FormatFlow(fl *Flow) string {
	var sb strings.Builder
	if fl.Cookie != 0 {
		fmt.Fprintf(&sb, "cookie=%#x, ", fl.Cookie)
	}
	if fl.Table != TableUnset && fl.Table != 0 {
		fmt.Fprintf(&sb, "table=%d, ", fl.Table)
	}
	if fl.IdleTimeout != 0 {
		fmt.Fprintf(&sb, "idle_timeout=%d, ", fl.IdleTimeout)
	}
	if fl.HardTimeout != 0 {
		fmt.Fprintf(&sb, "hard_timeout=%d, ", fl.HardTimeout)
	}
	if fl.Version >= mf.OF13 {
		for _, k := range flagKeywords {
			if fl.Flags&k.flag != 0 {
				sb.WriteString(k.name + " ")
			}
		}
	}
	if fl.Importance != 0 && fl.Version >= mf.OF14 {
		fmt.Fprintf(&sb, "importance=%d, ", fl.Importance)
	}
	if m := FormatMatch(&fl.Match, fl.Priority); m != "" {
		sb.WriteString(m)
		sb.WriteByte(' ')
	}
	sb.WriteString("actions=" + FormatActions(fl.Actions, fl.Version))
	return sb.String()
}
