package tests

import (
	"strings"
	"testing"
)

// traceLearnSteps are Open vSwitch's learn.at "standard VLAN+MAC
// learning": a learn action traced with a generated packet installs the
// learned flow (a trace with a packet has side effects), a trace without
// one does not.
func traceLearnSteps() []ofStep {
	const arp = "in_port(3),eth(src=50:54:00:00:00:05,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=192.168.0.1,tip=192.168.0.2,op=1,sha=50:54:00:00:00:05,tha=00:00:00:00:00:00)"
	const arp6 = "in_port(1),eth(src=50:54:00:00:00:06,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=192.168.0.1,tip=192.168.0.2,op=1,sha=50:54:00:00:00:06,tha=00:00:00:00:00:00)"
	return []ofStep{
		ofctl("add-flow", "br0", "table=0 actions=learn(table=1, hard_timeout=60, NXM_OF_VLAN_TCI[0..11], NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[], output:NXM_OF_IN_PORT[]), resubmit(,1)"),
		ofctl("add-flow", "br0", "table=1 priority=0 actions=flood"),
		appctl("ofproto/trace", "ovs-dummy", arp6),
		ofctl("dump-flows", "br0", "table=1", "--no-stats", "--sort"),
		appctl("ofproto/trace", "ovs-dummy", arp, "-generate"),
		ofctl("dump-flows", "br0", "table=1", "--no-stats", "--sort"),
	}
}

// TestTraceWithAPacketLearnsLikeOpenVSwitch: after the traces, table 1
// holds the same flows as in Open vSwitch (the traces' own text is
// compared elsewhere).
func TestTraceWithAPacketLearnsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, traceLearnSteps, func(s string) string {
		if strings.Contains(s, "ofproto/trace") {
			return "trace"
		}
		return s
	})
}
