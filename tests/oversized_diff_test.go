package tests

import (
	"strings"
	"testing"
)

// TestOversizedFlowLeftOutOfDumpsLikeOpenVSwitch is ovs-ofctl.at
// "show-flows - Oversized flow": a flow whose OpenFlow 1.0 stats entry
// would pass 64 kB (4,091 actions, dec_ttl taking 16 bytes as a Nicira
// action there) is left out of an OpenFlow 1.0 dump with Open vSwitch's
// warning, and dumped whole in OpenFlow 1.5 (where dec_ttl takes 8).
func TestOversizedFlowLeftOutOfDumpsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	flow := " priority=90,icmp,reg15=0x8005,metadata=0x1,nw_dst=11.0.0.1,icmp_type=8,icmp_code=0 actions=" +
		strings.Repeat("dec_ttl,resubmit(,39),", 2045) + "resubmit(,39)\n"
	steps := func() []ofStep {
		return []ofStep{
			{tool: "file", args: []string{"flows.txt", flow}},
			ofctl("-O", "OpenFlow15", "add-flows", "br0", "flows.txt"),
			ofctl("-O", "OpenFlow10", "dump-flows", "br0", "--no-stats"),
			{tool: "log", args: []string{`ofp_flow\|WARN\|`}},
			ofctl("-O", "OpenFlow15", "dump-flows", "br0", "--no-stats"),
		}
	}
	diffOneBridgeAgainstOpenVSwitch(t, steps)
}
