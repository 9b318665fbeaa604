package ofswitch

import (
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// traceProtocols are the protocol keywords of Open vSwitch's exact flow
// syntax with the Ethernet type and IP protocol they set.
var traceProtocols = map[string][2]uint16{
	"ip": {0x0800, 0}, "ipv6": {0x86dd, 0}, "icmp": {0x0800, 1}, "icmp6": {0x86dd, 58},
	"tcp": {0x0800, 6}, "tcp6": {0x86dd, 6}, "udp": {0x0800, 17}, "udp6": {0x86dd, 17},
	"sctp": {0x0800, 132}, "sctp6": {0x86dd, 132}, "arp": {0x0806, 0}, "rarp": {0x8035, 0},
	"mpls": {0x8847, 0}, "mplsm": {0x8848, 0},
}

// CheckTraceFlowFields refuses an ofproto/trace br_flow that sets a
// field twice, as Open vSwitch's parse_ofp_exact_flow does ("Bad openflow
// flow syntax: in_port=1,in_port=2: field in_port set multiple times";
// a second protocol keyword: "Ethernet type set multiple times" or
// "network protocol set multiple times"). Other errors are left to the
// flow parser.
func CheckTraceFlowFields(s string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("Bad openflow flow syntax: %s: %s", s, fmt.Sprintf(format, args...))
	}
	set := map[mf.ID]bool{}
	dlType, nwProto := mf.ByName("dl_type"), mf.ByName("nw_proto")
	for _, kv := range splitKeyValues(s) {
		key, _, _ := strings.Cut(kv, "=")
		key = strings.TrimSpace(key)
		if p, ok := traceProtocols[key]; ok {
			if set[dlType.ID] {
				return bad("Ethernet type set multiple times")
			}
			set[dlType.ID] = true
			if p[1] != 0 {
				if set[nwProto.ID] {
					return bad("network protocol set multiple times")
				}
				set[nwProto.ID] = true
			}
			continue
		}
		f := mf.ByName(key)
		if f == nil {
			continue
		}
		if set[f.ID] {
			return bad("field %s set multiple times", key)
		}
		set[f.ID] = true
	}
	return nil
}

// splitKeyValues splits at the commas and spaces outside parentheses, as
// Open vSwitch's ofputil_parse_key_value walks a flow.
func splitKeyValues(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '(', '[', '{':
				depth++
				continue
			case ')', ']', '}':
				depth--
				continue
			case ',', ' ', '\t':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if i > start {
			out = append(out, s[start:i])
		}
		start = i + 1
	}
	return out
}
