package tests

import "testing"

// ctSession is a stateful firewall in OpenFlow: untracked IP packets go
// through ct (zone 5) and recirculate to table 1, where new connections
// from p1 are committed and forwarded to p2, established traffic flows
// both ways, and new connections from p2 are dropped. It injects a UDP
// exchange and an unsolicited packet, and returns the conntrack table,
// the megaflows (sorted, counters masked), per-port counters, and the
// table after an NXT_CT_FLUSH_ZONE.
func ctSession() []ofStep {
	const (
		out  = "in_port(1),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1000,dst=53)"
		back = "in_port(2),eth(src=50:54:00:00:00:02,dst=50:54:00:00:00:01),eth_type(0x0800),ipv4(src=10.0.0.2,dst=10.0.0.1,proto=17,tos=0,ttl=64,frag=no),udp(src=53,dst=1000)"
		bad  = "in_port(2),eth(src=50:54:00:00:00:02,dst=50:54:00:00:00:01),eth_type(0x0800),ipv4(src=10.0.0.2,dst=10.0.0.1,proto=17,tos=0,ttl=64,frag=no),udp(src=7,dst=7)"
	)
	return []ofStep{
		ofctl("del-flows", "br0"),
		ofctl("add-flow", "br0", "table=0,priority=10,ip,ct_state=-trk,actions=ct(table=1,zone=5)"),
		ofctl("add-flow", "br0", "table=0,priority=1,actions=drop"),
		ofctl("add-flow", "br0", "table=1,priority=10,ip,in_port=1,ct_state=+trk+new,actions=ct(commit,zone=5,exec(set_field:0x7->ct_mark)),output:2"),
		ofctl("add-flow", "br0", "table=1,priority=10,ip,in_port=1,ct_state=+trk+est,actions=output:2"),
		ofctl("add-flow", "br0", "table=1,priority=10,ip,in_port=2,ct_state=+trk+est,ct_mark=0x7,actions=output:1"),
		ofctl("add-flow", "br0", "table=1,priority=1,actions=drop"),
		// Ports are polled independently: each packet is handled
		// before the next is injected, so the connection's state is
		// the same in both switches.
		appctl("netdev-dummy/receive", "p1", out),
		pause,
		appctl("netdev-dummy/receive", "p2", back),
		pause,
		appctl("netdev-dummy/receive", "p1", out),
		pause,
		appctl("netdev-dummy/receive", "p2", bad),
		settle,
		appctl("dpctl/dump-conntrack"),
		appctl("dpctl/dump-flows"),
		ofctl("dump-ports", "br0", "1"),
		ofctl("dump-ports", "br0", "2"),
		ofctl("--no-stats", "dump-flows", "br0"),
		ofctl("ct-flush-zone", "br0", "5"),
		appctl("dpctl/dump-conntrack"),
	}
}

// TestConntrackThroughOpenFlowLikeOpenVSwitch runs the ct() firewall
// session against gvs and Open vSwitch and requires the same transcript:
// connections tracked and committed with their mark, the recirculation
// megaflows, the packets forwarded and dropped, and the zone flush.
func TestConntrackThroughOpenFlowLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffAgainstOpenVSwitch(t, ctSession)
}
