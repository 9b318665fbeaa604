package tests

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev/pcap"
	"github.com/gvs-project/gvs/internal/nstest"
)

// tunnelSession configures native tunnels as Open vSwitch's
// tunnel-push-pop tests do (an underlay bridge br0 holding the local
// endpoint 1.1.2.88 on its local port, an integration bridge with VXLAN
// and Geneve ports), then traces encapsulation and decapsulation and
// sends a real Geneve frame in.
func tunnelSession() []ofStep {
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	const inner = "in_port=10,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,nw_ttl=64"
	const popVXLAN = "in_port(1),eth(src=f8:bc:12:44:34:b6,dst=aa:55:aa:55:00:00),eth_type(0x0800),ipv4(src=1.1.2.92,dst=1.1.2.88,proto=17,tos=0,ttl=64,frag=no),udp(src=51283,dst=4789)"
	return []ofStep{
		vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "other-config:hwaddr=aa:55:aa:55:00:00",
			"--", "add-port", "br0", "p0", "--", "set", "Interface", "p0", "type=dummy", "ofport_request=1", "other-config:hwaddr=aa:55:aa:55:00:01"),
		vsctl("add-br", "int-br", "--", "set", "bridge", "int-br", "datapath_type=dummy",
			"--", "add-port", "int-br", "t2", "--", "set", "Interface", "t2", "type=vxlan", "options:remote_ip=1.1.2.92", "options:key=123", "ofport_request=2",
			"--", "add-port", "int-br", "t4", "--", "set", "Interface", "t4", "type=geneve", "options:remote_ip=flow", "options:key=123", "ofport_request=4",
			"--", "add-port", "int-br", "t5", "--", "set", "Interface", "t5", "type=geneve", "options:remote_ip=1.1.2.93", "options:out_key=flow", "options:csum=true", "ofport_request=5",
			"--", "add-port", "int-br", "p1", "--", "set", "Interface", "p1", "type=dummy", "ofport_request=10"),
		appctl("dpif/show"),
		appctl("netdev-dummy/ip4addr", "br0", "1.1.2.88/24"),
		appctl("ovs/route/add", "1.1.2.92/24", "br0"),
		appctl("tnl/arp/set", "br0", "1.1.2.92", "f8:bc:12:44:34:b6"),
		appctl("tnl/arp/set", "br0", "1.1.2.93", "f8:bc:12:44:34:b7"),
		appctl("tnl/neigh/show"),
		appctl("tnl/ports/show"),
		ofctl("add-flow", "br0", "in_port=LOCAL,actions=1"),
		ofctl("add-flow", "br0", "in_port=1,actions=LOCAL"),
		ofctl("add-tlv-map", "int-br", "{class=0xffff,type=0,len=4}->tun_metadata0"),
		ofctl("add-flow", "int-br", "in_port=10,actions=2"),
		appctl("ofproto/trace", "int-br", inner),
		ofctl("mod-flows", "int-br", "in_port=10,actions=set_field:1.1.2.92->tun_dst,4"),
		appctl("ofproto/trace", "int-br", inner),
		ofctl("mod-flows", "int-br", "in_port=10,actions=set_field:0x1234->tun_metadata0,set_field:5->tun_id,5,output:2"),
		appctl("ofproto/trace", "int-br", inner),
		appctl("ofproto/trace", "ovs-dummy", popVXLAN),
		appctl("ofproto/trace", "ovs-dummy", strings.Replace(popVXLAN, "dst=4789", "dst=6081", 1)),
		appctl("ofproto/trace", "ovs-dummy", strings.Replace(popVXLAN, "dst=4789", "dst=6082", 1)),
		ofctl("add-flow", "int-br", "priority=100,in_port=4,tun_metadata0=0x1234,actions=10"),
		ofctl("add-flow", "int-br", "priority=50,in_port=4,actions=drop"),
		appctl("netdev-dummy/receive", "p0", geneveFrame(0x1234)),
		appctl("netdev-dummy/receive", "p0", geneveFrame(0x5678)),
		appctl("revalidator/wait"),
		appctl("dpctl/dump-flows"),
		ofctl("dump-flows", "int-br", "--no-stats"),
		ofctl("dump-flows", "int-br", "in_port=4"),
	}
}

// geneveFrame is an ICMP echo from 10.0.0.2 to 10.0.0.1 in Geneve (VNI
// 123, one option class 0xffff type 0 carrying opt) from 1.1.2.92 to
// br0's 1.1.2.88.
func geneveFrame(opt uint32) string {
	inner, _ := hex.DecodeString("505400000007" + "505400000005" + "0800" +
		"4500001c0001000040010000" + "0a000002" + "0a000001" + "0800f7ff00000000")
	binary.BigEndian.PutUint16(inner[24:], ipChecksum(inner[14:34]))
	gnv := []byte{0x02, 0x00, 0x65, 0x58, 0x00, 0x00, 0x7b, 0x00, 0xff, 0xff, 0x00, 0x01, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(gnv[12:], opt)
	udp := make([]byte, 8)
	binary.BigEndian.PutUint16(udp[0:], 51283)
	binary.BigEndian.PutUint16(udp[2:], 6081)
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(gnv)+len(inner)))
	ip, _ := hex.DecodeString("45000000000040004011000001010" + "25c01010258")
	binary.BigEndian.PutUint16(ip[2:], uint16(20+len(udp)+len(gnv)+len(inner)))
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
	eth, _ := hex.DecodeString("aa55aa550000" + "f8bc124434b6" + "0800")
	frame := append(append(append(append(eth, ip...), udp...), gnv...), inner...)
	return hex.EncodeToString(frame)
}

func ipChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// TestNativeTunnelsLikeOpenVSwitch runs the tunnel session against Open
// vSwitch (dummy datapath) and gvs-vswitchd and requires the same
// transcript: port numbering of the tunnel vports, the neighbour and port
// tables, traces of VXLAN and Geneve encapsulation (routes, neighbours,
// tnl_push headers with options and checksums) and of decapsulation
// (tnl_pop), and the megaflows a real Geneve frame makes.
func TestNativeTunnelsLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	run(t, ovsEnv, "ovs-vsctl", "--timeout=20", "init")
	want := runSteps(t, ovsEnv, "ovs-vswitchd", tunnelSession())
	stopOVS()
	_, gvsEnv := startDaemon(t)
	run(t, gvsEnv, "ovs-vsctl", "--timeout=20", "init")
	got := runSteps(t, gvsEnv, "gvs-vswitchd", tunnelSession())
	if os.Getenv("GVS_TRANSCRIPT") != "" {
		t.Logf("Open vSwitch transcript:\n%s", strings.Join(want, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
}

// TestUnresolvedTunnelNeighbourIsRetriedNotCached sends tunnel traffic to
// an endpoint whose MAC is unknown: no megaflow is installed while the
// neighbour is unresolved (so a lost reply cannot leave a drop megaflow
// that hides every later packet), the ARP request is sent again after
// the retransmit time, and once the reply arrives the traffic is
// encapsulated by a megaflow.
func TestUnresolvedTunnelNeighbourIsRetriedNotCached(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	_, env := startDaemon(t)
	dir := t.TempDir()
	pcapFile := dir + "/p0.pcap"
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "other-config:hwaddr=aa:55:aa:55:00:00",
		"--", "add-port", "br0", "p0", "--", "set", "Interface", "p0", "type=dummy", "ofport_request=1", "options:tx_pcap="+pcapFile,
		"--", "add-br", "int-br", "--", "set", "bridge", "int-br", "datapath_type=dummy",
		"--", "add-port", "int-br", "t2", "--", "set", "Interface", "t2", "type=vxlan", "options:remote_ip=1.1.2.92", "options:key=123", "ofport_request=2",
		"--", "add-port", "int-br", "p1", "--", "set", "Interface", "p1", "type=dummy", "ofport_request=10")
	appctl := appctlFunc(t, env)
	appctl("netdev-dummy/ip4addr", "br0", "1.1.2.88/24")
	appctl("ovs/route/add", "1.1.2.92/24", "br0")
	run(t, env, "ovs-ofctl", "add-flow", "int-br", "in_port=10,actions=2")
	const inner = "in_port(10),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"
	arpRequests := func() int {
		f, err := os.Open(pcapFile)
		if err != nil {
			return 0
		}
		defer f.Close()
		r, err := pcap.NewReader(f)
		if err != nil {
			return 0
		}
		n := 0
		for {
			frame, _, _, err := r.Next()
			if err != nil {
				return n
			}
			// ARP request for 1.1.2.92 from br0's address.
			if len(frame) >= 42 && hex.EncodeToString(frame[12:14]) == "0806" && frame[21] == 1 &&
				hex.EncodeToString(frame[28:32]) == "01010258" && hex.EncodeToString(frame[38:42]) == "0101025c" {
				n++
			}
		}
	}
	fromP1 := "in_port(" + odpPorts(t, env)("p1") + ")"
	tunnelFlows := func() string {
		var out []string
		for _, l := range strings.Split(appctl("dpctl/dump-flows"), "\n") {
			if strings.Contains(l, fromP1) {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	appctl("netdev-dummy/receive", "p1", inner)
	waitFor(t, "the first ARP request", func() bool { return arpRequests() == 1 })
	// Within the retransmit time: no second request, and no megaflow.
	appctl("netdev-dummy/receive", "p1", inner)
	appctl("revalidator/wait")
	if n := arpRequests(); n != 1 {
		t.Errorf("%d ARP requests within the retransmit time, want 1", n)
	}
	if f := tunnelFlows(); f != "" {
		t.Errorf("a megaflow was installed for an unresolved tunnel neighbour:\n%s", f)
	}
	// After it, the next packet asks again.
	time.Sleep(1100 * time.Millisecond)
	appctl("netdev-dummy/receive", "p1", inner)
	waitFor(t, "the retransmitted ARP request", func() bool { return arpRequests() == 2 })
	// The reply resolves the endpoint; the traffic is then encapsulated
	// by a megaflow.
	appctl("netdev-dummy/receive", "p0", "aa55aa550000"+"f8bc124434b6"+"0806"+"0001080006040002"+"f8bc124434b6"+"0101025c"+"aa55aa550000"+"01010258")
	waitFor(t, "the neighbour", func() bool { return strings.Contains(appctl("tnl/neigh/show"), "f8:bc:12:44:34:b6") })
	appctl("netdev-dummy/receive", "p1", inner)
	appctl("revalidator/wait")
	if f := tunnelFlows(); !strings.Contains(f, "tnl_push(tnl_port(") || !strings.Contains(f, "dst=f8:bc:12:44:34:b6") {
		t.Errorf("no encapsulating megaflow once the neighbour is known:\n%s", f)
	}
}
