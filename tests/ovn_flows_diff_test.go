package tests

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev/pcap"
	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// ovnTracePackets are packets from the VIFs of the OVN topology below, in
// ofproto/trace's flow syntax: switching, ARP and ND answered by OVN's
// responder flows, routing across the router, a load-balancer VIP, an
// ACL'd TCP port, a DHCP request (paused to the controller), port
// security drops, an unknown destination and a VLAN-tagged frame.
var ovnTracePackets = []string{
	"icmp,in_port=1,dl_src=00:00:00:00:00:11,dl_dst=00:00:00:00:00:12,nw_src=10.0.1.11,nw_dst=10.0.1.12,nw_ttl=64,icmp_type=8",
	"arp,in_port=1,dl_src=00:00:00:00:00:11,dl_dst=ff:ff:ff:ff:ff:ff,arp_spa=10.0.1.11,arp_tpa=10.0.1.12,arp_op=1,arp_sha=00:00:00:00:00:11",
	"arp,in_port=1,dl_src=00:00:00:00:00:11,dl_dst=ff:ff:ff:ff:ff:ff,arp_spa=10.0.1.11,arp_tpa=10.0.1.1,arp_op=1,arp_sha=00:00:00:00:00:11",
	"icmp,in_port=1,dl_src=00:00:00:00:00:11,dl_dst=00:00:00:00:01:01,nw_src=10.0.1.11,nw_dst=10.0.1.1,nw_ttl=64,icmp_type=8",
	"icmp,in_port=1,dl_src=00:00:00:00:00:11,dl_dst=00:00:00:00:01:01,nw_src=10.0.1.11,nw_dst=10.0.2.23,nw_ttl=64,icmp_type=8",
	"tcp,in_port=1,dl_src=00:00:00:00:00:11,dl_dst=00:00:00:00:00:12,nw_src=10.0.1.11,nw_dst=10.0.1.100,nw_ttl=64,tp_src=40000,tp_dst=80",
	"tcp,in_port=2,dl_src=00:00:00:00:00:12,dl_dst=00:00:00:00:00:11,nw_src=10.0.1.12,nw_dst=10.0.1.11,nw_ttl=64,tp_src=40000,tp_dst=22",
	"udp,in_port=3,dl_src=00:00:00:00:00:23,dl_dst=ff:ff:ff:ff:ff:ff,nw_src=0.0.0.0,nw_dst=255.255.255.255,nw_ttl=64,udp_src=68,udp_dst=67",
	"icmp,in_port=1,dl_src=00:00:00:00:00:99,dl_dst=00:00:00:00:00:12,nw_src=10.0.1.11,nw_dst=10.0.1.12,nw_ttl=64,icmp_type=8",
	"icmp,in_port=1,dl_src=00:00:00:00:00:11,dl_dst=00:00:00:00:00:12,nw_src=10.0.1.99,nw_dst=10.0.1.12,nw_ttl=64,icmp_type=8",
	"udp,in_port=2,dl_src=00:00:00:00:00:12,dl_dst=00:00:00:00:00:77,nw_src=10.0.1.12,nw_dst=10.0.1.77,nw_ttl=64,udp_src=5,udp_dst=6",
	"icmp6,in_port=1,dl_src=00:00:00:00:00:11,dl_dst=33:33:ff:00:01:01,ipv6_src=fe80::211:ff:fe00:11,ipv6_dst=ff02::1:ff00:101,nw_ttl=255,icmpv6_type=135,icmpv6_code=0,nd_target=fe80::200:ff:fe00:101",
	"tcp,in_port=3,dl_src=00:00:00:00:00:23,dl_dst=00:00:00:00:02:01,nw_src=10.0.2.23,nw_dst=10.0.1.11,nw_ttl=64,tp_src=22,tp_dst=40000",
	"tcp,in_port=3,dl_src=00:00:00:00:00:23,dl_dst=00:00:00:00:02:01,nw_src=10.0.2.23,nw_dst=10.0.1.100,nw_ttl=64,tp_src=5555,tp_dst=80",
	"dl_vlan=5,ip,in_port=1,dl_src=00:00:00:00:00:11,dl_dst=00:00:00:00:00:12,nw_src=10.0.1.11,nw_dst=10.0.1.12",
	// Through the router's NAT, and a TTL that expires in the router.
	"icmp,in_port=1,dl_src=00:00:00:00:00:11,dl_dst=00:00:00:00:01:01,nw_src=10.0.1.11,nw_dst=172.16.0.23,nw_ttl=64,icmp_type=8",
	"udp,in_port=3,dl_src=00:00:00:00:00:23,dl_dst=00:00:00:00:02:01,nw_src=10.0.2.23,nw_dst=10.0.1.11,nw_ttl=64,udp_src=9,udp_dst=9",
	"icmp,in_port=1,dl_src=00:00:00:00:00:11,dl_dst=00:00:00:00:01:01,nw_src=10.0.1.11,nw_dst=10.0.2.23,nw_ttl=1,icmp_type=8",
}

// ovnInjected are frames received on VIFs (odp flow syntax, composed by
// each switch's netdev-dummy/receive): ARP and ICMP answered by OVN's
// responders, routed and switched traffic, SSH allowed and ICMP/UDP
// dropped by the ACLs, a load-balancer VIP, a port-security violation.
var ovnInjected = []struct{ port, pkt string }{
	{"vm1", "in_port(1),eth(src=00:00:00:00:00:11,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=10.0.1.11,tip=10.0.1.12,op=1,sha=00:00:00:00:00:11,tha=00:00:00:00:00:00)"},
	{"vm1", "in_port(1),eth(src=00:00:00:00:00:11,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=10.0.1.11,tip=10.0.1.1,op=1,sha=00:00:00:00:00:11,tha=00:00:00:00:00:00)"},
	{"vm1", "in_port(1),eth(src=00:00:00:00:00:11,dst=00:00:00:00:01:01),eth_type(0x0800),ipv4(src=10.0.1.11,dst=10.0.1.1,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"},
	{"vm1", "in_port(1),eth(src=00:00:00:00:00:11,dst=00:00:00:00:01:01),eth_type(0x0800),ipv4(src=10.0.1.11,dst=10.0.2.23,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"},
	{"vm2", "in_port(2),eth(src=00:00:00:00:00:12,dst=00:00:00:00:00:11),eth_type(0x0800),ipv4(src=10.0.1.12,dst=10.0.1.11,proto=6,tos=0,ttl=64,frag=no),tcp(src=40000,dst=22),tcp_flags(syn)"},
	{"vm2", "in_port(2),eth(src=00:00:00:00:00:12,dst=00:00:00:00:00:11),eth_type(0x0800),ipv4(src=10.0.1.12,dst=10.0.1.11,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"},
	{"vm1", "in_port(1),eth(src=00:00:00:00:00:11,dst=00:00:00:00:00:12),eth_type(0x0800),ipv4(src=10.0.1.11,dst=10.0.1.12,proto=17,tos=0,ttl=64,frag=no),udp(src=5,dst=6)"},
	{"vm1", "in_port(1),eth(src=00:00:00:00:00:11,dst=00:00:00:00:00:12),eth_type(0x0800),ipv4(src=10.0.1.11,dst=10.0.1.100,proto=6,tos=0,ttl=64,frag=no),tcp(src=40001,dst=80),tcp_flags(syn)"},
	{"vm1", "in_port(1),eth(src=00:00:00:00:00:99,dst=00:00:00:00:00:12),eth_type(0x0800),ipv4(src=10.0.1.11,dst=10.0.1.12,proto=6,tos=0,ttl=64,frag=no),tcp(src=40000,dst=22),tcp_flags(syn)"},
	{"vm3", "in_port(3),eth(src=00:00:00:00:00:23,dst=00:00:00:00:02:01),eth_type(0x0800),ipv4(src=10.0.2.23,dst=10.0.1.11,proto=6,tos=0,ttl=64,frag=no),tcp(src=5000,dst=22),tcp_flags(syn)"},
	{"vm1", "in_port(1),eth(src=00:00:00:00:00:11,dst=00:00:00:00:01:01),eth_type(0x0800),ipv4(src=10.0.1.11,dst=172.16.0.23,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"},
	{"vm3", "in_port(3),eth(src=00:00:00:00:00:23,dst=00:00:00:00:02:01),eth_type(0x0800),ipv4(src=10.0.2.23,dst=10.0.1.11,proto=17,tos=0,ttl=64,frag=no),udp(src=9,dst=9)"},
	{"vm1", "in_port(1),eth(src=00:00:00:00:00:11,dst=00:00:00:00:01:01),eth_type(0x0800),ipv4(src=10.0.1.11,dst=10.0.2.23,proto=1,tos=0,ttl=1,frag=no),icmp(type=8,code=0)"},
}

// injectAndCapture sends ovnInjected through the switch (env, appctl
// target) with every VIF capturing its transmitted frames, and returns
// them per VIF, hex-encoded in order.
func injectAndCapture(t *testing.T, env []string, target, dir string) map[string][]string {
	t.Helper()
	for _, v := range ovnVIFs {
		run(t, env, "ovs-vsctl", "--timeout=20", "set", "interface", v.name, "options:tx_pcap="+filepath.Join(dir, v.name+".pcap"))
	}
	for _, in := range ovnInjected {
		run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", in.port, in.pkt)
		time.Sleep(100 * time.Millisecond) // conntrack state settles before the next
	}
	time.Sleep(500 * time.Millisecond)
	out := map[string][]string{}
	for _, v := range ovnVIFs {
		f, err := os.Open(filepath.Join(dir, v.name+".pcap"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := pcap.NewReader(f)
		if err != nil {
			f.Close()
			t.Fatalf("%s: %v", v.name, err)
		}
		for {
			frame, _, _, err := r.Next()
			if err != nil {
				break
			}
			out[v.name] = append(out[v.name], hex.EncodeToString(frame))
		}
		f.Close()
	}
	return out
}

// ovnVIFs are the logical ports plugged into br-int, with their OpenFlow
// port numbers.
var ovnVIFs = []struct{ name, ofport string }{{"vm1", "1"}, {"vm2", "2"}, {"vm3", "3"}}

// buildOVNTopology creates, through ovn-nbctl, two logical switches behind
// a router, with ACLs (to vm1 only SSH, allow-related; everything else
// outbound allow-related), port security, a TCP load balancer and DHCP.
func buildOVNTopology(o *ovnCluster) {
	o.nbctl("ls-add", "ls1", "--", "ls-add", "ls2", "--", "lr-add", "lr1")
	for _, p := range []struct{ ls, lrp, mac, cidr string }{
		{"ls1", "lr1-ls1", "00:00:00:00:01:01", "10.0.1.1/24"},
		{"ls2", "lr1-ls2", "00:00:00:00:02:01", "10.0.2.1/24"},
	} {
		sp := p.ls + "-lr1"
		o.nbctl("lrp-add", "lr1", p.lrp, p.mac, p.cidr, "--", "lsp-add", p.ls, sp, "--", "lsp-set-type", sp, "router",
			"--", "lsp-set-addresses", sp, "router", "--", "lsp-set-options", sp, "router-port="+p.lrp)
	}
	o.nbctl("lsp-add", "ls1", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:11 10.0.1.11",
		"--", "lsp-set-port-security", "vm1", "00:00:00:00:00:11 10.0.1.11")
	o.nbctl("lsp-add", "ls1", "vm2", "--", "lsp-set-addresses", "vm2", "00:00:00:00:00:12 10.0.1.12")
	o.nbctl("lsp-add", "ls2", "vm3", "--", "lsp-set-addresses", "vm3", "00:00:00:00:00:23 10.0.2.23")
	o.nbctl("acl-add", "ls1", "to-lport", "1001", `outport == "vm1" && ip4 && tcp.dst == 22`, "allow-related",
		"--", "acl-add", "ls1", "to-lport", "1000", `outport == "vm1" && ip4`, "drop",
		"--", "acl-add", "ls1", "from-lport", "1000", "ip4", "allow-related")
	o.nbctl("lb-add", "lb1", "10.0.1.100:80", "10.0.1.12:8080,10.0.2.23:8080", "tcp", "--", "ls-lb-add", "ls1", "lb1")
	opts := strings.TrimSpace(o.nbctl("create", "DHCP_Options", "cidr=10.0.2.0/24",
		`options="lease_time"="3600" "router"="10.0.2.1" "server_id"="10.0.2.1" "server_mac"="00:00:00:00:02:01"`))
	o.nbctl("lsp-set-dhcpv4-options", "vm3", opts)
	// IPv6 on the router and vm1, and NAT on the router: vm3 (10.0.2.23)
	// is reached from ls1 as 172.16.0.23 and its traffic leaves as that
	// address; ls1's subnet is SNATed to 172.16.0.1 toward ls2.
	o.nbctl("lrp-set-gateway-chassis", "lr1-ls2", "hv1")
	o.nbctl("lr-nat-add", "lr1", "dnat_and_snat", "172.16.0.23", "10.0.2.23")
	o.nbctl("lr-nat-add", "lr1", "snat", "172.16.0.1", "10.0.1.0/24")
}

var (
	// Recirculation ids: recirc(0x..) and recirc_id=0x.. in megaflows,
	// recirc_id=N (decimal) in controller actions' cookies.
	recircIDRE = regexp.MustCompile(`recirc(\(|_id=)(0x[0-9a-f]+|[0-9]+)`)
	dpPortRE   = regexp.MustCompile(`(?m)^\s*port \d+: .*$`)
)

// traceVerdict keeps the lines of an ofproto/trace report that say what
// the datapath does, per pass: the recirculation headers, the megaflows
// and the datapath actions, with recirculation ids numbered in order of
// appearance (each switch allocates its own).
func traceVerdict(report string) string {
	ids := map[string]string{}
	var out []string
	for _, l := range strings.Split(report, "\n") {
		if !strings.HasPrefix(l, "Megaflow:") && !strings.HasPrefix(l, "Datapath actions:") && !strings.HasPrefix(l, "recirc(") {
			continue
		}
		l = recircIDRE.ReplaceAllStringFunc(l, func(m string) string {
			sub := recircIDRE.FindStringSubmatch(m)
			if ids[sub[2]] == "" {
				ids[sub[2]] = fmt.Sprintf("R%d", len(ids)+1)
			}
			return "recirc" + sub[1] + ids[sub[2]]
		})
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// ovnSnapshot is br-int's OpenFlow state, as ovs-ofctl dumps it.
type ovnSnapshot struct {
	flows, groups string
	tlv           []string // add-tlv-map arguments
}

func snapshotBrInt(t *testing.T, env []string) ovnSnapshot {
	t.Helper()
	ofctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-ofctl", "-O", "OpenFlow15", "--timeout=20"}, args...)...)
	}
	var s ovnSnapshot
	s.flows = ofctl("dump-flows", "br-int", "--no-stats", "--no-names")
	s.groups = ofctl("dump-groups", "br-int")
	for _, l := range strings.Split(ofctl("dump-tlv-map", "br-int"), "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && strings.HasPrefix(f[0], "0x") && strings.HasPrefix(f[3], "tun_metadata") {
			s.tlv = append(s.tlv, fmt.Sprintf("{class=%s,type=%s,len=%s}->%s", f[0], f[1], f[2], f[3]))
		}
	}
	return s
}

// bodyLines drops a dump's reply header line and sorts the rest (dumps
// are in hash order), normalising dec_ttl(): Open vSwitch prints the
// DEC_TTL_CNT_IDS encoding OVN sends with parentheses, and ovs-ofctl
// parses that text back as plain dec_ttl.
func bodyLines(dump string) []string {
	var out []string
	for _, l := range strings.Split(dump, "\n") {
		if strings.Contains(l, " reply ") || strings.TrimSpace(l) == "" {
			continue
		}
		out = append(out, strings.ReplaceAll(l, "dec_ttl()", "dec_ttl"))
	}
	slices.Sort(out)
	return out
}

// TestOVNFlowTablesForwardLikeOpenVSwitch generates a flow table by
// running Debian's OVN (northd and ovn-controller) against Open vSwitch
// (dummy datapath), loads the same flows, groups and TLV map into gvs with
// ovs-ofctl, and requires, for every packet in ovnTracePackets, the same
// megaflows and datapath actions from gvs's ofproto/trace as from Open
// vSwitch's, pass by pass through every conntrack recirculation.
func TestOVNFlowTablesForwardLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	requireOVN(t)
	for _, bin := range []string{"ovs-ofctl", "ovs-appctl", "ovs-vswitchd"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	run(t, ovsEnv, "ovs-vsctl", "--timeout=20", "init")
	o := startOVNOn(t, ovsEnv, "dummy")
	buildOVNTopology(o)
	for _, v := range ovnVIFs {
		o.vsctl("add-port", "br-int", v.name, "--", "set", "interface", v.name, "type=dummy",
			"external_ids:iface-id="+v.name, "ofport_request="+v.ofport)
	}
	o.nbctl("--wait=hv", "sync")
	snap := snapshotBrInt(t, ovsEnv)
	if n := len(bodyLines(snap.flows)); n < 300 {
		t.Fatalf("OVN installed only %d flows into Open vSwitch; want a full pipeline:\n%s", n, snap.flows)
	}
	wantPorts := dpPortRE.FindAllString(run(t, ovsEnv, "ovs-appctl", "-t", "ovs-vswitchd", "dpctl/show"), -1)
	var want []string
	for _, p := range ovnTracePackets {
		want = append(want, traceVerdict(run(t, ovsEnv, "ovs-appctl", "-t", "ovs-vswitchd", "ofproto/trace", "br-int", p)))
	}
	// ovn-controller goes before packets flow, so that neither switch
	// has a controller answering packet-ins.
	stopPidfile(filepath.Join(o.dir, "controller.pid"))
	wantFrames := injectAndCapture(t, ovsEnv, "ovs-vswitchd", t.TempDir())
	if n := strings.Count(strings.Join(want, "\n"), "\nrecirc("); n < 5 {
		t.Fatalf("only %d conntrack recirculations in Open vSwitch's traces; the ACL and load-balancer stages are missing", n)
	}
	stopOVS()

	_, gvsEnv := startDaemon(t)
	vsctl := func(args ...string) string {
		return run(t, gvsEnv, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
	}
	vsctl("init")
	vsctl("add-br", "br-int", "--", "set", "bridge", "br-int", "datapath_type=dummy", "fail_mode=secure")
	for _, v := range ovnVIFs {
		vsctl("add-port", "br-int", v.name, "--", "set", "interface", v.name, "type=dummy", "ofport_request="+v.ofport)
	}
	if got := dpPortRE.FindAllString(run(t, gvsEnv, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/show"), -1); !slices.Equal(got, wantPorts) {
		t.Fatalf("datapath ports differ:\nOpen vSwitch: %q\ngvs:          %q", wantPorts, got)
	}
	dir := t.TempDir()
	ofctl := func(args ...string) string {
		return run(t, gvsEnv, append([]string{"ovs-ofctl", "-O", "OpenFlow15", "--timeout=30"}, args...)...)
	}
	for _, m := range snap.tlv {
		ofctl("add-tlv-map", "br-int", m)
	}
	groups := filepath.Join(dir, "groups.txt")
	if err := os.WriteFile(groups, []byte(strings.Join(bodyLines(snap.groups), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ofctl("add-groups", "br-int", groups)
	flows := filepath.Join(dir, "flows.txt")
	if err := os.WriteFile(flows, []byte(snap.flows), 0o644); err != nil {
		t.Fatal(err)
	}
	ofctl("--bundle", "add-flows", "br-int", flows)

	// What gvs reports back is what Open vSwitch had.
	if got := snapshotBrInt(t, gvsEnv); !slices.Equal(bodyLines(got.flows), bodyLines(snap.flows)) {
		t.Errorf("dump-flows differs from Open vSwitch's:\n%s", lineDiff(bodyLines(snap.flows), bodyLines(got.flows)))
	} else if !slices.Equal(bodyLines(got.groups), bodyLines(snap.groups)) {
		t.Errorf("dump-groups differs:\nOpen vSwitch: %q\ngvs:          %q", bodyLines(snap.groups), bodyLines(got.groups))
	}
	gotFrames := injectAndCapture(t, gvsEnv, "gvs-vswitchd", t.TempDir())
	nframes := 0
	for _, v := range ovnVIFs {
		nframes += len(wantFrames[v.name])
		if !slices.Equal(gotFrames[v.name], wantFrames[v.name]) {
			t.Errorf("frames sent on %s differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", v.name,
				strings.Join(wantFrames[v.name], "\n"), strings.Join(gotFrames[v.name], "\n"))
		}
	}
	t.Logf("frames per VIF: vm1 %d, vm2 %d, vm3 %d", len(wantFrames["vm1"]), len(wantFrames["vm2"]), len(wantFrames["vm3"]))
	if nframes < 8 {
		t.Errorf("Open vSwitch sent only %d frames for %d injected; the topology is not forwarding", nframes, len(ovnInjected))
	}
	for i, p := range ovnTracePackets {
		got := traceVerdict(run(t, gvsEnv, "ovs-appctl", "-t", "gvs-vswitchd", "ofproto/trace", "br-int", p))
		if got != want[i] {
			t.Errorf("trace of %s differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", p, want[i], got)
		}
	}
}

// lineDiff lists the lines only in a (-) or only in b (+), both sorted.
func lineDiff(a, b []string) string {
	var sb strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i] < b[j]):
			sb.WriteString("- " + a[i] + "\n")
			i++
		case i >= len(a) || b[j] < a[i]:
			sb.WriteString("+ " + b[j] + "\n")
			j++
		default:
			i++
			j++
		}
	}
	return sb.String()
}

// stopPidfile stops the daemon whose pid is in path and waits for it to go.
func stopPidfile(path string) { ovsoracle.StopPidfile(path) }
