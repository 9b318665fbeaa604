package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// packetOutCookieSession sends packet-outs whose packet-ins come from
// the packet-out's own controller action (no rule: cookie all ones,
// not printed), from a rule reached through output:TABLE (the rule's
// cookie), from a table miss in a patch peer (the miss rule's, 0), and
// ones whose OpenFlow 1.5 match sets tunnel fields (tun_id, tun_src,
// GBP, tun_metadata through the TLV table) that rules match on and the
// packet-ins carry back. It returns what monitors on both bridges
// printed.
func packetOutCookieSession(t *testing.T, env []string) string {
	t.Helper()
	setUpOneBridge(t, env)
	run(t, env, "ovs-vsctl", "add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy", "fail-mode=secure",
		"--", "add-port", "br0", "patch0", "--", "set", "interface", "patch0", "type=patch", "options:peer=patch1", "ofport_request=10",
		"--", "add-port", "br1", "patch1", "--", "set", "interface", "patch1", "type=patch", "options:peer=patch0", "ofport_request=11")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "cookie=0x5,in_port=1,actions=controller")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "cookie=0x6,tun_id=3,actions=controller")
	run(t, env, "ovs-ofctl", "add-tlv-map", "br0", "{class=0xffff,type=0,len=8}->tun_metadata2,{class=0xffff,type=1,len=4}->tun_metadata3")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "cookie=0x7,tun_metadata3=0x11,actions=controller")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "cookie=0x8,tun_src=1.1.1.1,actions=controller")
	dir := t.TempDir()
	var mons []*bgTool
	// br1's monitor speaks OpenFlow 1.0, so that table misses send it
	// packet-ins (Open vSwitch's "packet-out controller (patch port)").
	for i, args := range [][]string{{"-O", "OpenFlow15", "monitor", "br0", "65534"}, {"monitor", "br1", "65534", "-P", "nxt_packet_in"}} {
		ctl := filepath.Join(dir, "m"+itoa(i))
		mons = append(mons, startTool(t, env, "ovs-ofctl", append(args, "--unixctl="+ctl)...))
		waitFor(t, "the monitor's control socket", func() bool { _, err := os.Stat(ctl); return err == nil })
		run(t, env, "ovs-appctl", "-t", ctl, "ofctl/barrier")
	}
	const pkt = "50540000000a5054000000091234"
	run(t, env, "ovs-ofctl", "-O", "OpenFlow13", "packet-out", "br0", "1", "controller", pkt)
	run(t, env, "ovs-ofctl", "-O", "OpenFlow15", "packet-out", "br0", "in_port=1 packet="+pkt+" actions=table")
	run(t, env, "ovs-ofctl", "-O", "OpenFlow15", "packet-out", "br0", "in_port=2,tunnel_id=3 packet="+pkt+" actions=table")
	run(t, env, "ovs-ofctl", "-O", "OpenFlow15", "packet-out", "br0",
		"in_port=2,tun_src=1.1.1.1,tun_dst=2.2.2.2,tun_gbp_id=0x01,tun_gbp_flags=0x03 packet="+pkt+" actions=table")
	run(t, env, "ovs-ofctl", "-O", "OpenFlow15", "packet-out", "br0", "in_port=2,tun_metadata2=0x22,tun_metadata3=0x11 packet="+pkt+" actions=table")
	run(t, env, "ovs-ofctl", "-O", "OpenFlow13", "packet-out", "br0", "CONTROLLER", "output:10", pkt)
	for i := range mons {
		run(t, env, "ovs-appctl", "-t", filepath.Join(dir, "m"+itoa(i)), "ofctl/barrier")
	}
	return stopMonitors(t, mons)
}

// TestPacketOutPacketInCookiesLikeOpenVSwitch: the packet-ins of
// packet-outs carry Open vSwitch's cookies and metadata.
func TestPacketOutPacketInCookiesLikeOpenVSwitch(t *testing.T) {
	want, got := monitorSessionsBothWays(t, func(env []string) string { return packetOutCookieSession(t, env) })
	if got != want {
		t.Errorf("monitors differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
	if !strings.Contains(want, "cookie=0x5") || !strings.Contains(want, "no_match") || !strings.Contains(want, "tun_metadata3=0x11") {
		t.Errorf("the session did not produce the packet-ins it is about:\n%s", want)
	}
}
