package tests

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/netdev/pcap"
	"github.com/gvs-project/gvs/internal/nstest"
)

// greTunnelSession configures GRE tunnels as Open vSwitch's
// tunnel-push-pop tests do (underlay bridge br0 holding 1.1.2.88 and
// 2001:cafe::88, an integration bridge with gre and ip6gre ports: a
// keyed one, one with checksums, sequence numbers and the key from the
// flow, a keyless one, an ip6gre one, and a VXLAN port on a non-default
// UDP port beside them), traces encapsulation and
// decapsulation, and sends real frames both ways; p0 and p1 capture to
// pcap files in dir.
func greTunnelSession(dir string) []ofStep {
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	const inner = "in_port=10,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,nw_ttl=64"
	const innerODP = "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"
	const popGRE = "in_port(1),eth(src=f8:bc:12:44:34:b6,dst=aa:55:aa:55:00:00),eth_type(0x0800),ipv4(src=1.1.2.92,dst=1.1.2.88,proto=47,tos=0,ttl=64,frag=no)"
	const popGRE6 = "in_port(1),eth(src=f8:bc:12:44:34:b6,dst=aa:55:aa:55:00:00),eth_type(0x86dd),ipv6(src=2001:cafe::92,dst=2001:cafe::88,label=0,proto=47,tclass=0x0,hlimit=64,frag=no)"
	return []ofStep{
		vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "other-config:hwaddr=aa:55:aa:55:00:00",
			"--", "add-port", "br0", "p0", "--", "set", "Interface", "p0", "type=dummy", "ofport_request=1",
			"other-config:hwaddr=aa:55:aa:55:00:01", "options:tx_pcap="+filepath.Join(dir, "p0.pcap")),
		vsctl("add-br", "int-br", "--", "set", "bridge", "int-br", "datapath_type=dummy",
			"--", "add-port", "int-br", "p1", "--", "set", "Interface", "p1", "type=dummy", "ofport_request=10",
			"options:tx_pcap="+filepath.Join(dir, "p1.pcap")),
		vsctl("add-port", "int-br", "t1", "--", "set", "Interface", "t1", "type=gre", "options:remote_ip=1.1.2.92", "options:key=456", "ofport_request=3",
			"--", "add-port", "int-br", "t2", "--", "set", "Interface", "t2", "type=gre", "options:remote_ip=1.1.2.93", "options:out_key=flow",
			"options:csum=true", "options:seq=true", "options:dst_port=4789", "ofport_request=4",
			"--", "add-port", "int-br", "t3", "--", "set", "Interface", "t3", "type=gre", "options:remote_ip=1.1.2.94", "ofport_request=5",
			"--", "add-port", "int-br", "t4", "--", "set", "Interface", "t4", "type=ip6gre", "options:remote_ip=2001:cafe::92", "options:key=123", "ofport_request=6",
			"--", "add-port", "int-br", "t5", "--", "set", "Interface", "t5", "type=vxlan", "options:remote_ip=1.1.2.95", "options:dst_port=4790", "ofport_request=7"),
		appctl("dpif/show"),
		appctl("dpctl/show"),
		appctl("netdev-dummy/ip4addr", "br0", "1.1.2.88/24"),
		appctl("netdev-dummy/ip6addr", "br0", "2001:cafe::88/24"),
		appctl("ovs/route/add", "1.1.2.92/24", "br0"),
		appctl("ovs/route/add", "2001:cafe::92/24", "br0"),
		appctl("tnl/arp/set", "br0", "1.1.2.92", "f8:bc:12:44:34:b6"),
		appctl("tnl/arp/set", "br0", "1.1.2.93", "f8:bc:12:44:34:b7"),
		appctl("tnl/arp/set", "br0", "1.1.2.94", "f8:bc:12:44:34:b8"),
		appctl("tnl/neigh/set", "br0", "2001:cafe::92", "f8:bc:12:44:34:b6"),
		appctl("tnl/ports/show"),
		ofctl("add-flow", "br0", "in_port=LOCAL,actions=1"),
		ofctl("add-flow", "br0", "in_port=1,actions=LOCAL"),
		ofctl("add-flow", "int-br", "in_port=10,actions=3"),
		appctl("ofproto/trace", "int-br", inner),
		ofctl("mod-flows", "int-br", "in_port=10,actions=set_field:0x1234abcd->tun_id,4"),
		appctl("ofproto/trace", "int-br", inner),
		ofctl("mod-flows", "int-br", "in_port=10,actions=5,6"),
		appctl("ofproto/trace", "int-br", inner),
		// Decapsulation of GRE to a local address, over IPv4 and IPv6
		// (both by gre_sys, the GRE vport added first), not of UDP.
		appctl("ofproto/trace", "ovs-dummy", popGRE),
		appctl("ofproto/trace", "ovs-dummy", popGRE6),
		appctl("ofproto/trace", "ovs-dummy", strings.Replace(popGRE, "proto=47", "proto=17", 1)+",udp(src=1,dst=2)"),
		// Real traffic: from p1 into t1 (key) and t2 (csum, seq, key
		// from the flow), and GRE frames from the wire out of p1.
		ofctl("mod-flows", "int-br", "in_port=10,actions=3"),
		appctl("netdev-dummy/receive", "p1", "in_port(10),"+innerODP),
		ofctl("mod-flows", "int-br", "in_port=10,actions=set_field:0x1234abcd->tun_id,4"),
		appctl("netdev-dummy/receive", "p1", "in_port(10),"+innerODP),
		ofctl("add-flow", "int-br", "in_port=3,actions=10"),
		ofctl("add-flow", "int-br", "in_port=6,actions=10"),
		appctl("netdev-dummy/receive", "p0", greFrame(false, 0x1c8, false)),
		appctl("netdev-dummy/receive", "p0", greFrame(false, 0x1c8, true)),
		// A keyless frame from t3's remote, and one with a key no port
		// takes.
		appctl("netdev-dummy/receive", "p0", strings.Replace(greFrame(false, 0, false), "0101025c01010258", "0101025e01010258", 1)),
		appctl("netdev-dummy/receive", "p0", greFrame(false, 0x999, false)),
		appctl("revalidator/wait"),
		appctl("dpctl/dump-flows"),
	}
}

// ip6greSession is a configuration with only an ip6gre port, so that
// ip6gre_sys pops the IPv6 GRE frames.
func ip6greSession(dir string) []ofStep {
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	const inner = "in_port=10,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,nw_ttl=64"
	const innerODP = "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"
	return []ofStep{
		vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "other-config:hwaddr=aa:55:aa:55:00:00",
			"--", "add-port", "br0", "p0", "--", "set", "Interface", "p0", "type=dummy", "ofport_request=1",
			"other-config:hwaddr=aa:55:aa:55:00:01", "options:tx_pcap="+filepath.Join(dir, "p0.pcap")),
		vsctl("add-br", "int-br", "--", "set", "bridge", "int-br", "datapath_type=dummy",
			"--", "add-port", "int-br", "p1", "--", "set", "Interface", "p1", "type=dummy", "ofport_request=10",
			"options:tx_pcap="+filepath.Join(dir, "p1.pcap"),
			"--", "add-port", "int-br", "t4", "--", "set", "Interface", "t4", "type=ip6gre", "options:remote_ip=2001:cafe::92",
			"options:key=123", "options:csum=true", "ofport_request=6"),
		appctl("dpif/show"),
		appctl("netdev-dummy/ip6addr", "br0", "2001:cafe::88/24"),
		appctl("ovs/route/add", "2001:cafe::92/24", "br0"),
		appctl("tnl/neigh/set", "br0", "2001:cafe::92", "f8:bc:12:44:34:b6"),
		appctl("tnl/ports/show"),
		ofctl("add-flow", "br0", "in_port=LOCAL,actions=1"),
		ofctl("add-flow", "br0", "in_port=1,actions=LOCAL"),
		ofctl("add-flow", "int-br", "in_port=10,actions=6"),
		ofctl("add-flow", "int-br", "in_port=6,actions=10"),
		appctl("ofproto/trace", "int-br", inner),
		appctl("netdev-dummy/receive", "p1", "in_port(10),"+innerODP),
		appctl("netdev-dummy/receive", "p0", greFrame(true, 0x7b, true)),
		appctl("netdev-dummy/receive", "p0", greFrame(true, 0x7b, false)),
		appctl("revalidator/wait"),
		appctl("dpctl/dump-flows"),
	}
}

// greFrame is an ICMP echo from 10.0.0.2 to 10.0.0.1 in GRE with key
// key (and a GRE checksum when csum) from 1.1.2.92 (2001:cafe::92 when
// v6) to br0's address.
func greFrame(v6 bool, key uint32, csum bool) string {
	inner, _ := hex.DecodeString("505400000007" + "505400000005" + "0800" +
		"4500001c0001000040010000" + "0a000002" + "0a000001" + "0800f7ff00000000")
	binary.BigEndian.PutUint16(inner[24:], ipChecksum(inner[14:34]))
	gre := []byte{0x20, 0x00, 0x65, 0x58}
	if csum {
		gre = []byte{0xa0, 0x00, 0x65, 0x58, 0, 0, 0, 0}
	}
	gre = binary.BigEndian.AppendUint32(gre, key)
	pkt := append(gre, inner...)
	if csum {
		binary.BigEndian.PutUint16(pkt[4:], ipChecksum(pkt))
	}
	var eth, ip []byte
	if v6 {
		eth, _ = hex.DecodeString("aa55aa550000" + "f8bc124434b6" + "86dd")
		ip, _ = hex.DecodeString("6000000000002f40" + "2001cafe000000000000000000000092" + "2001cafe000000000000000000000088")
		binary.BigEndian.PutUint16(ip[4:], uint16(len(pkt)))
	} else {
		eth, _ = hex.DecodeString("aa55aa550000" + "f8bc124434b6" + "0800")
		ip, _ = hex.DecodeString("4500000000004000402f0000" + "0101025c" + "01010258")
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(pkt)))
		binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
	}
	return hex.EncodeToString(append(append(eth, ip...), pkt...))
}

// pcapFrames returns the frames of a pcap file as hex.
func pcapFrames(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		frame, _, _, err := r.Next()
		if err != nil {
			return out
		}
		out = append(out, hex.EncodeToString(frame))
	}
}

// TestGRETunnelsLikeOpenVSwitch runs the GRE session against Open
// vSwitch (dummy datapath) and gvs-vswitchd and requires the same
// transcript — port configuration and numbering (gre_sys, ip6gre_sys),
// tnl_push headers with keys, checksums and sequence numbers, tnl_pop of
// GRE to a local address, the OpenFlow port picked by tunnel key and
// source, megaflows — and the same frames on the wire: the encapsulated
// frames p0 sent (GRE checksum and sequence numbers included) and the
// decapsulated frames p1 sent.
func TestGRETunnelsLikeOpenVSwitch(t *testing.T) { compareGRESession(t, greTunnelSession) }

// TestIP6GRETunnelLikeOpenVSwitch is the same comparison for a switch
// whose only GRE port is ip6gre: ip6gre_sys pops, with checksums.
func TestIP6GRETunnelLikeOpenVSwitch(t *testing.T) { compareGRESession(t, ip6greSession) }

func compareGRESession(t *testing.T, session func(dir string) []ofStep) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsDir, gvsDir := t.TempDir(), t.TempDir()
	ovsEnv, stopOVS := startOpenVSwitch(t)
	run(t, ovsEnv, "ovs-vsctl", "--timeout=20", "init")
	want := runSteps(t, ovsEnv, "ovs-vswitchd", session(ovsDir))
	stopOVS()
	_, gvsEnv := startDaemon(t)
	run(t, gvsEnv, "ovs-vsctl", "--timeout=20", "init")
	got := runSteps(t, gvsEnv, "gvs-vswitchd", session(gvsDir))
	if os.Getenv("GVS_TRANSCRIPT") != "" {
		t.Logf("Open vSwitch transcript:\n%s", strings.Join(want, "\n"))
	}
	for i := range want {
		w := strings.ReplaceAll(want[i], ovsDir, "DIR")
		g := strings.ReplaceAll(got[i], gvsDir, "DIR")
		if g != w {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, w, g)
		}
	}
	for _, f := range []string{"p0.pcap", "p1.pcap"} {
		w, g := pcapFrames(t, filepath.Join(ovsDir, f)), pcapFrames(t, filepath.Join(gvsDir, f))
		if len(w) == 0 {
			t.Errorf("Open vSwitch sent nothing on %s", f)
		}
		if strings.Join(g, "\n") != strings.Join(w, "\n") {
			t.Errorf("%s differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", f, strings.Join(w, "\n"), strings.Join(g, "\n"))
		}
	}
}
