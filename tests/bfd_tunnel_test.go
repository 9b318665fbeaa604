package tests

import (
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// startBFDTunnelEnd starts a switch with start in a new namespace with
// the underlay (a veth end) on br-phy, whose local port has the address
// local/24, and on br-int a tunnel port t1 of type typ to remote running
// BFD with 100 ms timers (as ovn-controller enables it towards gateway
// chassis).
func startBFDTunnelEnd(t *testing.T, start chassisSwitch, underlay, local, remote, typ string, opts ...string) *bfdEnd {
	t.Helper()
	node := startSwitchNode(t, start)
	node.underlay(t, underlay, "", local+"/24")
	env, ns, dir, target := node.env, node.ns, node.dir, node.target
	vsctl := func(args ...string) { run(t, env, append([]string{"ovs-vsctl", "--timeout=30"}, args...)...) }
	vsctl(append([]string{"add-br", "br-int", "--", "set", "bridge", "br-int", "datapath_type=netdev", "fail-mode=secure",
		"--", "add-port", "br-int", "t1", "--", "set", "interface", "t1", "type=" + typ, "options:remote_ip=" + remote, "options:key=flow",
		"ofport_request=1", "bfd:enable=true", "bfd:min_rx=300", "bfd:min_tx=300"}, opts...)...)
	return &bfdEnd{env: env, target: target, port: "t1", pid: filepath.Join(dir, target+".pid"), ns: ns}
}

// TestBFDOverTunnelsInteroperatesWithOpenVSwitch: gvs and Open vSwitch
// run BFD inside a Geneve, VXLAN and GRE tunnel (the tunnel port's
// session, control packets encapsulated by the sender and recognised
// after decapsulation by the receiver, as between OVN chassis): the
// sessions come up, and killing Open vSwitch takes gvs's session down
// within the detect time.
func TestBFDOverTunnelsInteroperatesWithOpenVSwitch(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs BFD sessions in real time for 18 s")
	}
	nstest.Require(t, "tests")
	for _, bin := range []string{"ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server", "ovsdb-tool"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvs := gvsChassis(daemonBinary(t))
	for _, typ := range []string{"geneve", "vxlan", "gre"} {
		t.Run(typ, func(t *testing.T) {
			va, vb := nstest.Veth(t)
			a := startBFDTunnelEnd(t, gvs, va, "172.31.9.1", "172.31.9.2", typ)
			b := startBFDTunnelEnd(t, ovsChassis, vb, "172.31.9.2", "172.31.9.1", typ)
			a.waitState(t, "up", 15*time.Second)
			b.waitState(t, "up", 10*time.Second)
			if typ == "geneve" {
				// A change of the tunnel's options re-adds gvs's port;
				// its session goes on (Open vSwitch reconfigures in
				// place): no flap.
				run(t, a.env, "ovs-vsctl", "set", "interface", "t1", "options:csum=true")
				time.Sleep(500 * time.Millisecond)
				if st := run(t, a.env, "ovs-vsctl", "get", "interface", "t1", "bfd_status"); !strings.Contains(st, `flap_count="1"`) ||
					!strings.Contains(st, "state=up") {
					t.Errorf("after an options change: %s", st)
				}
				// bfd:oam sets the Geneve O bit on gvs's control packets.
				run(t, a.env, "ovs-vsctl", "set", "interface", "t1", "bfd:oam=true")
				if !geneveOAM(t, b.ns, vb, "172.31.9.1") {
					t.Error("gvs's Geneve BFD packets lack the OAM bit with bfd:oam=true")
				}
			}
			b.kill(t)
			took := a.waitState(t, "down", 5*time.Second)
			t.Logf("gvs: down %v after Open vSwitch was killed", took)
			if took > 3*time.Second {
				t.Errorf("down only after %v (detect time 900 ms)", took)
			}
			if s := a.show(); !strings.Contains(s, "Local Diagnostic: Control Detection Time Expired\n") {
				t.Errorf("after the peer died:\n%s", s)
			}
		})
	}
}

// geneveOAM captures a few Geneve packets from src on dev (in namespace
// ns) and reports whether the last has the O (OAM) bit set.
func geneveOAM(t *testing.T, ns, dev, src string) bool {
	t.Helper()
	out := nstest.RunIgnoreStatus("ip", "netns", "exec", ns, "timeout", "3", "tcpdump", "-i", dev, "-c", "4", "-nn", "-x",
		"udp dst port 6081 and src host "+src)
	// -x prints from the IP header: the Geneve flags byte is at 20 + 8 + 1.
	var last []byte
	var cur []byte
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "0x0000:") {
			if cur != nil {
				last = cur
			}
			cur = nil
		}
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[0], "0x") {
			for _, w := range f[1:] {
				if b, err := hex.DecodeString(w); err == nil {
					cur = append(cur, b...)
				}
			}
		}
	}
	if cur != nil {
		last = cur
	}
	if len(last) < 30 {
		t.Logf("no Geneve packet captured:\n%s", out)
		return false
	}
	return last[29]&0x80 != 0
}
