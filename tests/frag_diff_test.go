package tests

import (
	"strings"
	"testing"
)

// fragSteps are Open vSwitch's "fragment handling - trace" check: in
// each set-frags mode (normal: fragments are looked up without L4
// ports; drop; nx-match: as they are), an unfragmented packet, a first
// and a later fragment are traced, and get-frags reports the mode
// ("reassemble" is refused and changes nothing).
func fragSteps() []ofStep {
	const base = "in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=6,tos=0,ttl=128"
	s := []ofStep{
		{tool: "file", args: []string{"flows.txt", `priority=75 tcp nw_frag=no    tp_dst=80 actions=move:OXM_OF_TCP_DST[]->OXM_OF_TCP_SRC[],output:2
priority=75 tcp nw_frag=first tp_dst=80 actions=move:OXM_OF_TCP_DST[]->OXM_OF_TCP_SRC[],output:3
priority=50 tcp nw_frag=no              actions=move:OXM_OF_TCP_DST[]->OXM_OF_TCP_SRC[],output:2
priority=50 tcp nw_frag=first           actions=move:OXM_OF_TCP_DST[]->OXM_OF_TCP_SRC[],output:LOCAL
priority=50 tcp nw_frag=later           actions=output:3
`}},
		ofctl("replace-flows", "br0", "flows.txt"),
	}
	for _, mode := range []string{"normal", "drop", "nx-match", "reassemble"} {
		s = append(s, ofctl("set-frags", "br0", mode), ofctl("get-frags", "br0"))
		for _, tail := range []string{",frag=no),tcp(src=12345,dst=80)", ",frag=first),tcp(src=12345,dst=80)", ",frag=later)"} {
			s = append(s, appctl("ofproto/trace", "ovs-dummy", base+tail))
		}
	}
	return s
}

// TestFragmentHandlingLikeOpenVSwitch: the fragment handling modes
// translate fragments as Open vSwitch does.
func TestFragmentHandlingLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, fragSteps, func(s string) string {
		return keepTraceLines(s, func(l string) bool {
			return strings.Contains(l, "IP fragments") || strings.HasPrefix(l, "Megaflow:") || strings.HasPrefix(l, "Datapath actions:")
		})
	})
}
