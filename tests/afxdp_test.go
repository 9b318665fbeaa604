package tests

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/internal/nstest"
)

// requireAFXDP fails the test under CI=true, and skips it elsewhere,
// unless this kernel has AF_XDP sockets.
func requireAFXDP(t *testing.T) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("test needs AF_XDP sockets: %v", err)
	}
	t.Skipf("skipping, test needs AF_XDP sockets: %v", err)
}

// afxdpTopo is a switch in its own namespace whose bridge br0 (netdev
// datapath) has AF_XDP ports a0 and a1, veth ends whose peers sit in
// host namespaces with 10.78.0.1/24 and 10.78.0.2/24.
type afxdpTopo struct {
	sw    *chassis
	hosts [2]string
}

// swLink moves a fresh veth's end into the switch's namespace as name
// and returns the other end, still in this namespace.
func (c *chassis) swLink(t *testing.T, name string) string {
	t.Helper()
	a, b := nstest.Veth(t)
	nstest.Run(t, "ip", "link", "set", a, "netns", c.ns)
	nstest.InNetns(t, c.ns, "ip", "link", "set", a, "name", name)
	nstest.InNetns(t, c.ns, "ip", "link", "set", name, "up")
	return b
}

// startAFXDPTopo starts the switch with start and adds a0 and a1 as
// afxdp ports with the extra interface settings given (ovs-vsctl "set
// interface" arguments, applied to both).
func startAFXDPTopo(t *testing.T, start chassisSwitch, extra ...string) *afxdpTopo {
	t.Helper()
	sw := startSwitchNode(t, start)
	tp := &afxdpTopo{sw: sw}
	args := []string{"ovs-vsctl", "--timeout=30", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev"}
	for i := range 2 {
		port := fmt.Sprintf("a%d", i)
		peer := sw.swLink(t, port)
		h := nstest.Netns(t)
		tp.hosts[i] = h
		nstest.Run(t, "ip", "link", "set", peer, "netns", h)
		nstest.InNetns(t, h, "ip", "link", "set", "lo", "up")
		nstest.InNetns(t, h, "ip", "addr", "add", fmt.Sprintf("10.78.0.%d/24", i+1), "dev", peer)
		nstest.InNetns(t, h, "ip", "link", "set", peer, "up")
		// AF_XDP sees frames without the kernel's checksum state, so the
		// host side must not leave checksums to offload: Open vSwitch's
		// own AF_XDP tests turn tx offloads off on their veths the same way.
		nstest.InNetns(t, h, "ethtool", "-K", peer, "tx", "off", "txvlan", "off")
		args = append(args, "--", "add-port", "br0", port, "--", "set", "interface", port, "type=afxdp")
		args = append(args, extra...)
	}
	run(t, sw.env, args...)
	return tp
}

// xdpOn is what ip(8) shows attached to link in namespace ns: "xdp"
// (driver mode), "xdpgeneric", or "" for nothing.
func xdpOn(t *testing.T, ns, link string) string {
	t.Helper()
	out := nstest.RunIgnoreStatus("ip", "netns", "exec", ns, "ip", "link", "show", link)
	for _, f := range strings.Fields(out) {
		if f == "xdp" || f == "xdpgeneric" || f == "xdpdrv" {
			return f
		}
	}
	return ""
}

// udpNoPorts is the Udp NoPorts counter of namespace ns: datagrams that
// arrived for a port nobody listens on.
func udpNoPorts(t *testing.T, ns string) int {
	t.Helper()
	lines := strings.Split(nstest.InNetns(t, ns, "cat", "/proc/net/snmp"), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.HasPrefix(lines[i], "Udp:") && strings.HasPrefix(lines[i+1], "Udp:") {
			names, vals := strings.Fields(lines[i]), strings.Fields(lines[i+1])
			if j := slices.Index(names, "NoPorts"); j > 0 && j < len(vals) {
				n, _ := strconv.Atoi(vals[j])
				return n
			}
		}
	}
	t.Fatalf("%s: no Udp NoPorts in /proc/net/snmp", ns)
	return 0
}

// udpBurst sends n one-byte datagrams from namespace ns to dst port 9
// and requires the receiving namespace to count exactly n.
func udpBurst(t *testing.T, from, to, dst string, n int) {
	t.Helper()
	before := udpNoPorts(t, to)
	nstest.InNetns(t, from, "bash", "-c", fmt.Sprintf("for i in $(seq %d); do printf x >/dev/udp/%s/9; done", n, dst))
	var got int
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if got = udpNoPorts(t, to) - before; got >= n {
			break
		}
	}
	if got != n {
		t.Errorf("%s -> %s: %d of %d datagrams arrived", from, to, got, n)
	}
}

// TestAFXDPPortsForwardPingAndUDPBothWays: gvs-vswitchd with two afxdp
// ports (best-effort, which is native XDP on a veth) forwards ping and
// 1000-datagram UDP bursts in both directions with nothing lost; the
// program is attached in driver mode while the ports exist, gone with a
// removed port and gone when the daemon exits.
func TestAFXDPPortsForwardPingAndUDPBothWays(t *testing.T) {
	nstest.Require(t, "tests", "ping", "bash", "ethtool")
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	requireAFXDP(t)
	tp := startAFXDPTopo(t, gvsChassis(daemonBinary(t)))
	sw := tp.sw
	for _, p := range []string{"a0", "a1"} {
		if e := strings.TrimSpace(run(t, sw.env, "ovs-vsctl", "get", "interface", p, "error")); e != "[]" {
			t.Fatalf("%s: error %s", p, e)
		}
		if got := xdpOn(t, sw.ns, p); got != "xdp" {
			t.Fatalf("%s: %q attached, want xdp (driver mode)", p, got)
		}
	}
	nstest.InNetns(t, tp.hosts[0], "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.78.0.2")
	nstest.InNetns(t, tp.hosts[1], "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.78.0.1")
	udpBurst(t, tp.hosts[0], tp.hosts[1], "10.78.0.2", 1000)
	udpBurst(t, tp.hosts[1], tp.hosts[0], "10.78.0.1", 1000)
	// The statistics column is refreshed every few seconds.
	var stats string
	waitFor(t, "a1 tx_packets >= 1003 in its statistics", func() bool {
		stats = run(t, sw.env, "ovs-vsctl", "get", "interface", "a1", "statistics")
		m := regexp.MustCompile(`\btx_packets=(\d+)`).FindStringSubmatch(stats)
		return m != nil && atoiT(t, m[1]) >= 1003
	})
	if !strings.Contains(stats, "xsk_queue_0_rx_dropped=0") {
		t.Errorf("a1 statistics %s: want xsk_queue_0_rx_dropped=0", stats)
	}
	run(t, sw.env, "ovs-vsctl", "--timeout=30", "del-port", "br0", "a0")
	if got := xdpOn(t, sw.ns, "a0"); got != "" {
		t.Errorf("a0 removed: %q still attached", got)
	}
	run(t, sw.env, "ovs-appctl", "-t", sw.target, "exit")
	waitFor(t, "the daemon to exit and a1's program to go", func() bool { return xdpOn(t, sw.ns, "a1") == "" })
}

func atoiT(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// afxdpReport configures, on a switch started with start, afxdp ports
// good and bad, and returns what a user sees: each interface's error and
// status, the afxdp lines of dpif/show, the mode ip(8) shows attached,
// the statistics keys, the log lines of the afxdp module, and what is
// attached after a port is removed and after the daemon exits.
func afxdpReport(t *testing.T, start chassisSwitch) string {
	tp := startAFXDPTopo(t, start)
	sw := tp.sw
	var out strings.Builder
	// The PMD core is given: which core a switch picks by itself is not
	// what this test is about.
	run(t, sw.env, "ovs-vsctl", "set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0x2")
	for _, name := range []string{"a2", "a3", "a4", "a5"} {
		sw.swLink(t, name)
	}
	for _, add := range [][]string{
		{"a2", "options:xdp-mode=generic", "options:use-need-wakeup=false"},
		{"a3", "options:xdp-mode=bogus"},
		{"a4", "options:n_rxq=20"},
		{"a5", "options:xdp-mode=native-with-zerocopy"},
		{"nosuch0"},
	} {
		args := append([]string{"add-port", "br0", add[0], "--", "set", "interface", add[0], "type=afxdp"}, add[1:]...)
		vsctlTry(sw.env, args...)
	}
	for _, name := range []string{"a0", "a1", "a2", "a3", "a4", "a5", "nosuch0"} {
		c := exec.Command("ovs-vsctl", "--timeout=5", "get", "interface", name, "error", "status")
		c.Env = sw.env
		b, _ := c.CombinedOutput()
		fmt.Fprintf(&out, "%s: %s; attached %q\n", name, strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "; "), xdpOn(t, sw.ns, name))
	}
	for _, l := range strings.Split(run(t, sw.env, "ovs-appctl", "-t", sw.target, "dpif/show"), "\n") {
		if strings.Contains(l, "afxdp") {
			fmt.Fprintln(&out, regexp.MustCompile(` \d+/\d+:`).ReplaceAllString(l, " N/N:"))
		}
	}
	// The afxdp ports' queues are PMD threads' (Open vSwitch's afxdp
	// class is a PMD one).
	for _, l := range strings.Split(run(t, sw.env, "ovs-appctl", "-t", sw.target, "dpif-netdev/pmd-rxq-show"), "\n") {
		if strings.Contains(l, "port: a") || strings.HasPrefix(l, "pmd thread") {
			fmt.Fprintln(&out, regexp.MustCompile(`usage: +(\d+|NOT AVAIL) %`).ReplaceAllString(l, "usage: N %"))
		}
	}
	stats := run(t, sw.env, "ovs-vsctl", "get", "interface", "a0", "statistics")
	var keys []string
	for _, m := range regexp.MustCompile(`(\w+)=`).FindAllStringSubmatch(stats, -1) {
		keys = append(keys, m[1])
	}
	slices.Sort(keys)
	fmt.Fprintf(&out, "statistics keys: %s\n", strings.Join(keys, " "))
	// A mode changed on a running port (which keeps its OpenFlow port
	// number; the number itself depends on the order the switch added a0
	// and a1 in, which Open vSwitch does not fix).
	ofport := func() string {
		return strings.TrimSpace(run(t, sw.env, "ovs-vsctl", "get", "interface", "a1", "ofport"))
	}
	ofBefore := ofport()
	run(t, sw.env, "ovs-vsctl", "--timeout=30", "set", "interface", "a1", "options:xdp-mode=generic")
	for _, l := range strings.Split(run(t, sw.env, "ovs-appctl", "-t", sw.target, "dpif/show"), "\n") {
		if strings.Contains(l, " a1 ") {
			fmt.Fprintf(&out, "a1 set to generic: same ofport %t, attached %q;%s\n", ofport() == ofBefore,
				xdpOn(t, sw.ns, "a1"), regexp.MustCompile(` \d+/\d+:`).ReplaceAllString(l, " N/N:"))
		}
	}
	run(t, sw.env, "ovs-vsctl", "--timeout=30", "del-port", "br0", "a2")
	fmt.Fprintf(&out, "a2 removed: attached %q\n", xdpOn(t, sw.ns, "a2"))
	run(t, sw.env, "ovs-appctl", "-t", sw.target, "exit")
	time.Sleep(500 * time.Millisecond)
	fmt.Fprintf(&out, "after exit: a0 %q a1 %q\n", xdpOn(t, sw.ns, "a0"), xdpOn(t, sw.ns, "a1"))
	return out.String()
}

// afxdpLogLines are log lines both switches write for afxdpReport's
// configuration (module|LEVEL|text).
var afxdpLogLines = []string{
	"netdev_afxdp|INFO|a0: Setting XDP mode to best-effort.",
	"netdev_afxdp|INFO|a0: native XDP mode will be in use.",
	"netdev_afxdp|INFO|a2: Setting XDP mode to generic.",
	"netdev_afxdp|ERR|a3: Incorrect xdp-mode (bogus).",
	"netdev|WARN|a3: could not set configuration (Invalid argument)",
	"netdev_afxdp|ERR|a4: Too big 'n_rxq' (20 > 16).",
	"netdev|WARN|a4: could not set configuration (Invalid argument)",
	"netdev_afxdp|ERR|xsk_socket__create failed (Operation not supported) mode: native-with-zerocopy, use-need-wakeup: true, qid: 0",
	"netdev_afxdp|ERR|a5: Failed to create AF_XDP socket on queue 0 in native-with-zerocopy mode.",
	"netdev_afxdp|ERR|a5: Failed to create AF_XDP socket on queue 0.",
	"netdev_afxdp|ERR|a5: AF_XDP device reconfiguration failed.",
	"bridge|WARN|could not add network device a5 to ofproto (Invalid argument)",
	"bridge|WARN|could not open network device nosuch0 (No such device)",
	"netdev_afxdp|INFO|a2: Removing xdp program.",
	"netdev_afxdp|INFO|a1: Setting XDP mode to generic.",
}

// TestAFXDPPortsReportLikeOpenVSwitch: the same afxdp ports, good and
// bad, on gvs-vswitchd and on Open vSwitch's ovs-vswitchd (linked with
// libxdp): the same Interface error and status, the same dpif/show
// lines, the same XDP mode attached, the same statistics keys, the same
// log lines, the new mode after a running port's xdp-mode changes, and
// no program left after a port is removed or the daemon exits.
func TestAFXDPPortsReportLikeOpenVSwitch(t *testing.T) {
	nstest.Require(t, "tests", "ethtool")
	for _, bin := range []string{"ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server", "ovsdb-tool"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	requireAFXDP(t)
	gvs := gvsChassis(daemonBinary(t))
	var reports [2]string
	var logs [2]string
	for i, sw := range []struct {
		start chassisSwitch
		log   string
	}{{ovsChassis, "ovs-vswitchd.log"}, {gvs, "gvs-vswitchd.log"}} {
		var dir string
		start := func(t *testing.T, ns, d string, env []string) string {
			dir = d
			return sw.start(t, ns, d, env)
		}
		reports[i] = afxdpReport(t, start)
		b, _ := os.ReadFile(dir + "/" + sw.log)
		logs[i] = string(b)
	}
	if reports[0] != reports[1] {
		t.Errorf("Open vSwitch:\n%s\ngvs:\n%s", reports[0], reports[1])
	} else {
		t.Logf("both:\n%s", reports[0])
	}
	for i, who := range []string{"Open vSwitch", "gvs"} {
		for _, l := range afxdpLogLines {
			if !strings.Contains(logs[i], "|"+l+"\n") {
				t.Errorf("%s log lacks %q", who, l)
			}
		}
	}
}

// TestHandoverKeepsAFXDPPorts: gvs-vswitchd with two afxdp ports (native
// XDP) forwarding a ping every 10 ms hands the switch over to a new
// process: every ping is answered, the successor adopts both ports with
// their program still attached (no detach, no reattach), and
// dpif/show reports them as before.
func TestHandoverKeepsAFXDPPorts(t *testing.T) {
	requireAFXDP(t)
	r := newRestartRig(t)
	ports := strings.Fields(r.vsctl("list-ports", "br0"))
	if len(ports) != 2 {
		t.Fatalf("ports %v", ports)
	}
	for _, p := range ports {
		r.vsctl("set", "interface", p, "type=afxdp")
	}
	r.ofctl("add-flow", "br0", "actions=NORMAL")
	// dpif/show's port lines, numbers masked (the first line counts hits).
	show := func() string {
		s := regexp.MustCompile(` \d+/\d+:`).ReplaceAllString(r.appctl("dpif/show"), " N/N:")
		_, ports, _ := strings.Cut(s, "\n")
		return ports
	}
	showBefore := show()
	for _, p := range ports {
		if !strings.Contains(showBefore, p+" N/N: (afxdp: n_rxq=1, use-need-wakeup=true, xdp-mode=best-effort, xdp-mode-in-use=native)") {
			t.Fatalf("dpif/show before the handover:\n%s", showBefore)
		}
	}
	xdpID := func(p string) string {
		return regexp.MustCompile(`prog/xdp id (\d+)`).FindString(nstest.Run(t, "ip", "-d", "link", "show", p))
	}
	ids := []string{xdpID(ports[0]), xdpID(ports[1])}
	if ids[0] == "" || ids[1] == "" {
		t.Fatalf("no XDP program attached: %q", ids)
	}
	ping := startPing(t, r, 300)
	time.Sleep(time.Second)
	took := r.handover("", nil)
	sent, got := ping.result(t)
	if sent != 300 || got != sent {
		t.Fatalf("ping: %d replies to %d requests", got, sent)
	}
	for i, p := range ports {
		if id := xdpID(p); id != ids[i] {
			t.Errorf("%s: %q attached after the handover, %q before", p, id, ids[i])
		}
	}
	if got := show(); got != showBefore {
		t.Errorf("dpif/show after the handover:\n%s\nbefore:\n%s", got, showBefore)
	}
	logb, _ := os.ReadFile(r.dir + "/gvs-vswitchd.log")
	if !strings.Contains(string(logb), "handover: took over 3 ports") {
		t.Errorf("the log does not say the successor took over 3 ports:\n%s", logb)
	}
	t.Logf("handover took %v; ping %d/%d", took.Round(time.Millisecond), got, sent)
}
