package tests

import (
	"strings"
	"testing"
)

// Frames of Open vSwitch's mcast-snooping.at: IGMPv1 reports for
// 224.1.1.1 from 172.16.34.30 tagged VLAN 1 and 2, IGMPv1 queries from
// 172.16.34.1 and .2 tagged VLAN 1 and 2, an IGMPv3 query with a bad
// checksum, an MLDv1 report for ff02::1:ff0e:4c67 (hop-by-hop router
// alert).
const (
	igmpReportVLAN1 = "01005E010101000C29A027A18100000108004500001C000100004002CBAEAC10221EE001010112140CE9E0010101"
	igmpReportVLAN2 = "01005E010101000C29A027A28100000208004500001C000100004002CBAEAC10221EE001010112140CE9E0010101"
	igmpQueryVLAN1  = "01005E010101000C29A027D18100000108004500001C000100004002CBCBAC102201E00101011114EEEB00000000"
	igmpQueryVLAN2  = "01005E010101000C29A027D28100000208004500001C000100004002CBCAAC102202E00101011114EEEB00000000"
	igmpBadChecksum = "01005e0000015c8a38552552810006bd080046c000240000000001027f00ac111901e0000001940400001164ec1000000000027d000000000000000000000000"
	mldReport       = "3333ff0e4c67000c290e4c6786dd600000000020000100000000000000000000000000000000ff0200000000000000000001ff0e4c673a000502000001008300e7b800000000ff0200000000000000000001ff0e4c67"
)

// mcastData is a UDP datagram to group dst tagged VLAN 1, from p2's host.
func mcastData(dstMAC, dst string) string {
	return "in_port(2),eth(src=aa:55:aa:55:00:02,dst=" + dstMAC + "),eth_type(0x8100),vlan(vid=1,pcp=0),encap(eth_type(0x0800),ipv4(src=10.0.0.2,dst=" + dst +
		",proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=8000))"
}

// mcastSnoopingSteps enable snooping on a NORMAL bridge of three trunk
// ports, learn a group on p1 and queriers on p3, then send multicast
// data from p2: to the group (its member and the router get it), to a
// group nobody joined with flooding of unregistered groups off (the
// router only) and on (every port), to 224.0.0.x (flooded, RFC 4541).
// Where each packet went is read from the ports' tx counters. Then a
// port's VLAN change and a removed port take their entries with them,
// an IGMP message with a bad checksum teaches nothing, mdb/flush empties
// the table, and a bridge without snooping says so.
func mcastSnoopingSteps() []ofStep {
	recv := func(port, frame string) ofStep { return appctl("netdev-dummy/receive", port, frame) }
	return []ofStep{
		appctl("mdb/show", "br0"),
		vsctl("set", "bridge", "br0", "mcast_snooping_enable=true", "other_config:mcast-snooping-disable-flood-unregistered=true"),
		ofctl("add-flow", "br0", "actions=NORMAL"),
		appctl("time/stop"),
		recv("p1", igmpReportVLAN1), recv("p1", igmpReportVLAN2),
		recv("p3", igmpQueryVLAN1), recv("p3", igmpQueryVLAN2),
		recv("p2", mldReport),
		appctl("mdb/show", "br0"),
		ofctl("dump-ports", "br0"),
		recv("p2", mcastData("01:00:5e:01:01:01", "224.1.1.1")),
		ofctl("dump-ports", "br0"),
		recv("p2", mcastData("01:00:5e:01:01:02", "239.1.1.2")),
		ofctl("dump-ports", "br0"),
		recv("p2", mcastData("01:00:5e:00:00:fb", "224.0.0.251")),
		ofctl("dump-ports", "br0"),
		vsctl("set", "bridge", "br0", "other_config:mcast-snooping-disable-flood-unregistered=false"),
		recv("p2", mcastData("01:00:5e:01:01:03", "239.1.1.3")),
		ofctl("dump-ports", "br0"),
		vsctl("set", "port", "p3", "tag=2"),
		appctl("mdb/show", "br0"),
		vsctl("del-port", "br0", "p2"),
		appctl("mdb/show", "br0"),
		appctl("mdb/flush", "br0"),
		recv("p1", igmpBadChecksum),
		appctl("mdb/show", "br0"),
		appctl("mdb/flush"),
		appctl("mdb/show", "nobridge"),
		vsctl("set", "bridge", "br0", "mcast_snooping_enable=false"),
		appctl("mdb/show", "br0"),
		appctl("mdb/flush", "br0"),
	}
}

// TestMulticastSnoopingLikeOpenVSwitch: mdb/show, where multicast data
// goes, and the table's upkeep are Open vSwitch's.
func TestMulticastSnoopingLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, mcastSnoopingSteps, sortPortStats, sameDaemonName)
}

// sameDaemonName names both daemons alike in ovs-appctl's error line.
func sameDaemonName(s string) string {
	return strings.ReplaceAll(s, "ovs-appctl: gvs-vswitchd: ", "ovs-appctl: ovs-vswitchd: ")
}
