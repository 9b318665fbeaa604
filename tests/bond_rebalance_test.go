package tests

import (
	"fmt"
	"regexp"
	"testing"
	"time"
)

// TestBalanceSLBRebalancesLoadBetweenMembers: a balance-slb bond hands
// new source MACs' buckets to its members in turn (p1, p2, p1); when the
// two MACs on p1 carry all the traffic, the next rebalance (every
// bond-rebalance-interval, here 1 s) moves one of their buckets to p2,
// and bond/show lists a loaded bucket on each member (the shift's log
// line is checked in ofproto/bond's tests).
func TestBalanceSLBRebalancesLoadBetweenMembers(t *testing.T) {
	t.Parallel()
	_, env := startDaemon(t)
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-bond", "br0", "bond0", "p1", "p2", "bond_mode=balance-slb", "other_config:bond-rebalance-interval=1000",
		"--", "set", "interface", "p1", "type=dummy", "ofport_request=1",
		"--", "set", "interface", "p2", "type=dummy", "ofport_request=2",
		"--", "add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3")
	run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "netdev-dummy/set-admin-state", "up")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "actions=NORMAL")
	pkt := func(src int) string {
		return fmt.Sprintf("in_port(3),eth(src=50:54:00:00:00:%02x,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0800),"+
			"ipv4(src=10.0.0.%d,dst=10.0.0.99,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)", src, src)
	}
	// Three sources, in this order, take three buckets: p1, p2, p1.
	for _, src := range []int{1, 2, 3} {
		run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "netdev-dummy/receive", "p3", pkt(src))
	}
	// 160 frames of 1,400 bytes from sources 1 and 3: 448 kB on p1.
	for range 80 {
		for _, src := range []int{1, 3} {
			run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "netdev-dummy/receive", "p3", pkt(src), "--len", "1400")
		}
	}
	loaded := regexp.MustCompile(`(?m)^member (p\d): enabled\n(?:  .*\n)*?  hash \d+: \d+ kB load$`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		show := run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "bond/show", "bond0")
		members := map[string]bool{}
		for _, m := range loaded.FindAllStringSubmatch(show, -1) {
			members[m[1]] = true
		}
		if members["p1"] && members["p2"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no rebalance within 10 s:\n%s\n%s", show, run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-flows"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
