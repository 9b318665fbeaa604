package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// failoverTopo is OVN's HA gateway: a hypervisor hv1 with a VIF (vm1 on
// sw0), two gateway chassis gw1 (priority 20) and gw2 (priority 10) for
// the gateway port of router lr0, which SNATs sw0 to 172.16.0.1 towards
// an external host. The three chassis share an underlay segment (a Linux
// bridge in its own namespace) and run Geneve between them;
// ovn-controller enables BFD on those tunnels and redirects hv1's traffic
// for the gateway port with bundle(active_backup) over them. The
// gateways reach the external host through their br-ex (a localnet
// mapping) and a second bridged segment.
type failoverTopo struct {
	o             *ovnCluster
	hv1, gw1, gw2 *chassis
	vm1, ext      string // namespaces
	underlay      map[*chassis]string
	uns           string // the underlay segment's namespace
}

// newFailoverTopo builds the topology with switches started by start and
// BFD timers bfdMs (0: OVN's and the switch's defaults) and waits until
// hv1's BFD sessions are up, gw1 holds the gateway port and vm1 reaches
// the external host.
func newFailoverTopo(t *testing.T, start chassisSwitch, bfdMs int) *failoverTopo {
	t.Helper()
	ft := &failoverTopo{underlay: map[*chassis]string{}}
	ft.uns = nstest.Netns(t)
	ft.ext = nstest.Netns(t)
	inU := func(args ...string) { nstest.InNetns(t, ft.uns, args...) }
	inExt := func(args ...string) { nstest.InNetns(t, ft.ext, args...) }
	inU("ip", "link", "add", "brU", "type", "bridge")
	inU("ip", "link", "set", "brU", "up")
	inExt("ip", "link", "add", "brE", "type", "bridge")
	inExt("ip", "addr", "add", "172.16.0.100/24", "dev", "brE")
	inExt("ip", "link", "set", "brE", "up")
	inExt("ip", "link", "set", "lo", "up")

	ft.o = startOVNCentral(t, nil)
	// Twice in CI a standby gateway's controller sat idle through a 60 s
	// --wait=hv with nb_cfg 0 and 22 desired flows while the others had
	// hundreds: a Southbound view that never got its gateway datapath,
	// as when a monitor condition change is never answered (nb_cfg is not
	// reported while one is in flight). These tests are about the
	// switch's failover, so the controllers monitor all of the
	// Southbound database, as large deployments run them.
	ft.o.monitorAll = true
	if bfdMs > 0 {
		ms := strconv.Itoa(bfdMs)
		ft.o.nbctl("set", "NB_Global", ".", "options:bfd-min-rx="+ms, "options:bfd-min-tx="+ms)
	}
	chassisAt := func(name, ip string) *chassis {
		a, b := nstest.Veth(t)
		nstest.Run(t, "ip", "link", "set", b, "netns", ft.uns)
		inU("ip", "link", "set", b, "master", "brU")
		inU("ip", "link", "set", b, "up")
		c := startChassis(t, ft.o, start, name, ip, a, "")
		ft.underlay[c] = b
		return c
	}
	ft.hv1 = chassisAt("hv1", "172.31.0.1")
	ft.gw1 = chassisAt("gw1", "172.31.0.2")
	ft.gw2 = chassisAt("gw2", "172.31.0.3")
	for _, gw := range []*chassis{ft.gw1, ft.gw2} {
		x, y := nstest.Veth(t)
		nstest.Run(t, "ip", "link", "set", x, "netns", gw.ns)
		nstest.Run(t, "ip", "link", "set", y, "netns", ft.ext)
		inExt("python3", "-c", ethtoolOff, y)
		inExt("ip", "link", "set", y, "master", "brE")
		inExt("ip", "link", "set", y, "up")
		nstest.InNetns(t, gw.ns, "ip", "link", "set", x, "up")
		run(t, gw.env, "ovs-vsctl", "--timeout=30", "add-br", "br-ex", "--", "set", "bridge", "br-ex", "datapath_type=netdev",
			"--", "add-port", "br-ex", x,
			"--", "set", "open", ".", "external_ids:ovn-bridge-mappings=physnet:br-ex")
	}

	o := ft.o
	o.nbctl("ls-add", "sw0")
	o.nbctl("lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "50:54:00:00:00:01 10.0.0.1")
	o.nbctl("lr-add", "lr0")
	o.nbctl("lrp-add", "lr0", "lr0-sw0", "00:00:00:00:ff:01", "10.0.0.254/24")
	o.nbctl("lsp-add", "sw0", "sw0-lr0", "--", "lsp-set-type", "sw0-lr0", "router", "--", "lsp-set-addresses", "sw0-lr0", "router",
		"--", "lsp-set-options", "sw0-lr0", "router-port=lr0-sw0")
	o.nbctl("lrp-add", "lr0", "lr0-public", "00:00:00:00:ff:02", "172.16.0.1/24")
	o.nbctl("lrp-set-gateway-chassis", "lr0-public", "gw1", "20")
	o.nbctl("lrp-set-gateway-chassis", "lr0-public", "gw2", "10")
	o.nbctl("ls-add", "public")
	o.nbctl("lsp-add", "public", "public-lr0", "--", "lsp-set-type", "public-lr0", "router", "--", "lsp-set-addresses", "public-lr0", "router",
		"--", "lsp-set-options", "public-lr0", "router-port=lr0-public")
	o.nbctl("lsp-add", "public", "ln-public", "--", "lsp-set-type", "ln-public", "localnet", "--", "lsp-set-addresses", "ln-public", "unknown",
		"--", "lsp-set-options", "ln-public", "network_name=physnet")
	o.nbctl("lr-nat-add", "lr0", "snat", "172.16.0.1", "10.0.0.0/24")
	ft.vm1 = ft.hv1.vif(t, "vm1", "50:54:00:00:00:01", "10.0.0.1/24")
	nstest.InNetns(t, ft.vm1, "ip", "route", "add", "default", "via", "10.0.0.254")
	o.nbctl("--wait=hv", "sync")

	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range []*chassis{ft.hv1, ft.gw1, ft.gw2} {
				for _, cmd := range []string{"bfd/show", "tnl/neigh/show", "ovs/route/show"} {
					x := exec.Command("ovs-appctl", "--timeout=5", "-t", c.target, cmd)
					x.Env = c.env
					out, _ := x.CombinedOutput()
					t.Logf("%s %s:\n%s", c.ns, cmd, out)
				}
				t.Logf("%s bfd_status: %s", c.ns, c.bfdStatus(t))
			}
		}
	})
	waitLong(t, "hv1's BFD sessions to both gateways up", 60*time.Second, func() bool {
		return len(bfdState("up").FindAllString(ft.hv1.bfdStatus(t), -1)) == 2
	})
	waitLong(t, "gw1 to hold the gateway port", 30*time.Second, func() bool { return ft.gatewayHolder(t) == "gw1" })
	waitLong(t, "vm1 to reach the external host", 30*time.Second, func() bool { return ping(ft.vm1, "172.16.0.100") })
	return ft
}

// waitLong is waitFor with a deadline of its own.
func waitLong(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// bfdState matches a session's own state (not remote_state) in
// bfd_status.
func bfdState(s string) *regexp.Regexp { return regexp.MustCompile(`(^|[ {,])state=` + s + `\b`) }

// bfdStatus is the bfd_status of the chassis's Geneve interfaces.
func (c *chassis) bfdStatus(t *testing.T) string {
	return run(t, c.env, "ovs-vsctl", "--timeout=30", "--bare", "--columns=bfd_status", "find", "interface", "type=geneve")
}

// gatewayHolder names the chassis bound to the gateway port's
// chassisredirect port in the southbound database ("" for none).
func (ft *failoverTopo) gatewayHolder(t *testing.T) string {
	sb := func(args ...string) string {
		return strings.TrimSpace(run(t, nil, append([]string{"ovn-sbctl", "--timeout=30", "--db=unix:" + ft.o.sb}, args...)...))
	}
	u := sb("--bare", "--columns=chassis", "find", "port_binding", "logical_port=cr-lr0-public")
	if u == "" {
		return ""
	}
	return sb("--bare", "--columns=name", "list", "chassis", u)
}

// failoverRun is what one failover measured.
type failoverRun struct {
	sent, received int
	// outage is the time from the fault to the first ping reply after
	// the interruption it caused (0: none), gap the longest time between
	// two replies, detect the time until hv1's bfd_status showed a
	// session down.
	outage, gap, detect time.Duration
	tcpKept             bool   // the long-lived TCP transfer finished without a reset
	tcpDetail           string // what its receiver reported
	holder              string // chassis holding the gateway port afterwards
	newSNAT             string // source address the external host sees on a new connection
	// flushes are the zones gw2 flushed after the fault, each named as
	// ovn-controller names it in br-int's external_ids (ct-zone-NAME).
	flushes []string
}

func (r failoverRun) String() string {
	return fmt.Sprintf("ping %d/%d answered, outage %v, longest gap %v, BFD down after %v, TCP kept %v (%s), gateway %s, new connection from %s, zones flushed on gw2 %v",
		r.received, r.sent, r.outage.Round(time.Millisecond), r.gap.Round(time.Millisecond), r.detect.Round(time.Millisecond),
		r.tcpKept, r.tcpDetail, r.holder, r.newSNAT, r.flushes)
}

var pingReply = regexp.MustCompile(`(?m)^\[(\d+\.\d+)\] \d+ bytes from .*icmp_seq=(\d+)`)

// failover runs a ping stream (every 20 ms) and a long-lived TCP
// transfer from vm1 to the external host, applies fault after 2 s, and
// reports what the traffic saw, who holds the gateway port and what a
// new connection looks like from outside.
func (ft *failoverTopo) failover(t *testing.T, fault func()) failoverRun {
	t.Helper()
	const count, interval = 400, 20 * time.Millisecond
	var srvOut strings.Builder
	srv := startListener(t, ft.ext, `
import socket
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0',9100)); s.listen(1); s.settimeout(30)
`+listening+`
c,a=s.accept(); c.settimeout(30); d=0; err='eof'
try:
    while True:
        x=c.recv(65536)
        if not x: break
        d+=len(x)
except Exception as e:
    err=type(e).__name__
print('%d %s' % (d, err))`, &srvOut, &srvOut)
	defer func() { srv.Process.Kill(); srv.Wait() }()
	// 1 kB every 10 ms for as long as the ping stream runs.
	cli := exec.Command("ip", "netns", "exec", ft.vm1, "python3", "-c", fmt.Sprintf(`
import socket, time
s=socket.create_connection(('172.16.0.100',9100),timeout=10)
try:
    for i in range(%d):
        s.sendall(b'x'*1000); time.sleep(0.01)
    s.shutdown(socket.SHUT_WR); time.sleep(1)
except Exception as e:
    print(type(e).__name__)`, int(count*interval/(10*time.Millisecond))))
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cli.Process.Kill(); cli.Wait() }()
	pinger := exec.Command("ip", "netns", "exec", ft.vm1, "ping", "-D", "-n", "-i", "0.02", "-W", "1", "-c", strconv.Itoa(count), "172.16.0.100")
	var pingOut strings.Builder
	pinger.Stdout = &pingOut
	if err := pinger.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	faultAt := time.Now()
	fault()
	detected := make(chan time.Duration, 1)
	go func() {
		for time.Since(faultAt) < 15*time.Second {
			c := exec.Command("ovs-vsctl", "--timeout=5", "--bare", "--columns=bfd_status", "find", "interface", "type=geneve")
			c.Env = ft.hv1.env
			if out, _ := c.Output(); bfdState("down").Match(out) {
				detected <- time.Since(faultAt)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		detected <- 0
	}()
	pinger.Wait()
	cli.Wait()
	srv.Wait()

	r := failoverRun{sent: count, detect: <-detected}
	var last time.Time
	for _, m := range pingReply.FindAllStringSubmatch(pingOut.String(), -1) {
		f, _ := strconv.ParseFloat(m[1], 64)
		at := time.Unix(0, int64(f*1e9))
		r.received++
		if !last.IsZero() && at.Sub(last) > r.gap {
			r.gap = at.Sub(last)
		}
		// The reply that ends the interruption: the first after the
		// fault that follows a silence of five intervals.
		if r.outage == 0 && at.After(faultAt) && !last.IsZero() && at.Sub(last) > 5*interval {
			r.outage = at.Sub(faultAt)
		}
		last = at
	}
	r.tcpDetail = strings.TrimSpace(srvOut.String())
	want := fmt.Sprintf("%d eof", int(count*interval/(10*time.Millisecond))*1000)
	r.tcpKept = r.tcpDetail == want
	waitLong(t, "a chassis to hold the gateway port", 30*time.Second, func() bool {
		r.holder = ft.gatewayHolder(t)
		return r.holder != "" && r.holder != "gw1"
	})
	// The port is claimed in the southbound database before gw2 has
	// installed its flows and announced the address: a user's next
	// connection may need a retry (three tries of 10 s).
	for try := 0; try < 3; try++ {
		if r.newSNAT = peerAddr(t, ft.vm1, ft.ext, "172.16.0.100", 9101+try); !strings.HasPrefix(r.newSNAT, "error") {
			break
		}
	}
	r.flushes = ft.gw2.zonesFlushedSince(t, faultAt)
	return r
}

var flushLine = regexp.MustCompile(`(?m)^(\S+)\|\d+\|\S+\|INFO\|br-int: flushed conntrack zone (\d+) `)

// zonesFlushedSince lists the conntrack zones gvs-vswitchd logged
// flushing on br-int since t0, each as ZONE=NAME with the name
// ovn-controller gives the zone in br-int's external_ids (ct-zone-NAME);
// for another switch, nothing.
func (c *chassis) zonesFlushedSince(t *testing.T, t0 time.Time) []string {
	b, err := os.ReadFile(filepath.Join(c.dir, "gvs-vswitchd.log"))
	if err != nil {
		return nil
	}
	names := map[string]string{}
	ids := run(t, c.env, "ovs-vsctl", "--timeout=30", "get", "bridge", "br-int", "external_ids")
	for _, m := range regexp.MustCompile(`"?ct-zone-([^"=]+)"?="?(\d+)"?`).FindAllStringSubmatch(ids, -1) {
		names[m[2]] = m[1]
	}
	var out []string
	for _, m := range flushLine.FindAllStringSubmatch(string(b), -1) {
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil || at.Before(t0) {
			continue
		}
		out = append(out, m[2]+"="+names[m[2]])
	}
	return out
}

// killSwitch kills the chassis's switch daemon (SIGKILL, by its pidfile).
func (c *chassis) killSwitch(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(c.dir, c.target+".pid"))
	if err != nil {
		t.Fatalf("switch pidfile: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 {
		t.Fatalf("bad pid %q", b)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// checkFailover asserts what every failover must achieve: the backup
// gateway took over, new connections leave through its SNAT, the ping
// stream came back, and the backup flushed the gateway port's conntrack
// zone and no other.
func checkFailover(t *testing.T, r failoverRun) {
	t.Helper()
	t.Log(r)
	if r.holder != "gw2" {
		t.Errorf("gateway port held by %q after the failover, want gw2", r.holder)
	}
	if r.newSNAT != "172.16.0.1" {
		t.Errorf("a new connection after the failover reached the external host as %q, want 172.16.0.1 (gw2's SNAT)", r.newSNAT)
	}
	if r.received == 0 || r.sent-r.received > r.sent/4 {
		t.Errorf("the ping stream did not come back: %d of %d answered", r.received, r.sent)
	}
	// Taking the gateway port over, gw2's ovn-controller flushes its
	// zone (NXT_CT_FLUSH_ZONE for cr-lr0-public); no other zone goes.
	if len(r.flushes) == 0 {
		t.Errorf("gw2 flushed no conntrack zone when it took the gateway port over")
	}
	for _, z := range r.flushes {
		if !strings.HasSuffix(z, "=cr-lr0-public") {
			t.Errorf("gw2 flushed zone %s, not the gateway port's", z)
		}
	}
}

// TestOVNGatewayFailoverWhenTheActiveSwitchDies: three gvs-vswitchd
// chassis under OVN; the active gateway's gvs is killed mid-stream. hv1's
// BFD session to it goes down, its bundle moves the traffic to gw2's
// tunnel, gw2 claims the gateway port, and new connections leave through
// gw2's SNAT zone.
func TestOVNGatewayFailoverWhenTheActiveSwitchDies(t *testing.T) {
	// Not parallel: BFD at 100 ms and the outage measured need the
	// cores that the parallel tests would take (CI has two).
	requireOVN(t)
	ft := newFailoverTopo(t, gvsChassis(daemonBinary(t)), 100)
	r := ft.failover(t, func() { ft.gw1.killSwitch(t) })
	checkFailover(t, r)
	if !bfdState("down").MatchString(ft.hv1.bfdStatus(t)) {
		t.Errorf("hv1's BFD session to gw1 is not down:\n%s", ft.hv1.bfdStatus(t))
	}
}

// TestOVNGatewayFailoverWhenTheTunnelLinkGoesDown: the same with gw1
// alive but cut from the underlay (its link set down).
func TestOVNGatewayFailoverWhenTheTunnelLinkGoesDown(t *testing.T) {
	// Not parallel: BFD at 100 ms and the outage measured need the
	// cores that the parallel tests would take (CI has two).
	requireOVN(t)
	ft := newFailoverTopo(t, gvsChassis(daemonBinary(t)), 100)
	r := ft.failover(t, func() { nstest.InNetns(t, ft.uns, "ip", "link", "set", ft.underlay[ft.gw1], "down") })
	checkFailover(t, r)
}

// TestOVNGatewayFailoverSideBySide is the failover harness: with
// GVS_FAILOVER_HARNESS=1 it runs both faults under OVN's default BFD
// timers and at bfd-min-rx=bfd-min-tx=100 on Open vSwitch's ovs-vswitchd
// (netdev datapath) and on gvs-vswitchd, and prints what each run
// measured (tests/perf/failover/run.sh; figures in docs/performance.md).
func TestOVNGatewayFailoverSideBySide(t *testing.T) {
	if os.Getenv("GVS_FAILOVER_HARNESS") == "" {
		t.Skip("the failover harness runs with GVS_FAILOVER_HARNESS=1 (tests/perf/failover/run.sh)")
	}
	requireOVN(t)
	nstest.RequireBinary(t, "ovs-vswitchd", "openvswitch-switch")
	rounds, _ := strconv.Atoi(os.Getenv("GVS_FAILOVER_ROUNDS"))
	rounds = max(rounds, 1)
	switches := []struct {
		name  string
		start chassisSwitch
	}{{"Open vSwitch", ovsChassis}, {"gvs", gvsChassis(daemonBinary(t))}}
	faults := []struct {
		name string
		do   func(*testing.T, *failoverTopo)
	}{
		{"switch killed", func(t *testing.T, ft *failoverTopo) { ft.gw1.killSwitch(t) }},
		{"link down", func(t *testing.T, ft *failoverTopo) {
			nstest.InNetns(t, ft.uns, "ip", "link", "set", ft.underlay[ft.gw1], "down")
		}},
	}
	var table []string
	for round := 1; round <= rounds; round++ {
		for _, bfd := range []int{0, 100} {
			for _, f := range faults {
				for _, sw := range switches {
					name := fmt.Sprintf("round %d, BFD %s, %s, %s", round, map[int]string{0: "default", 100: "100 ms"}[bfd], f.name, sw.name)
					t.Run(name, func(t *testing.T) {
						ft := newFailoverTopo(t, sw.start, bfd)
						r := ft.failover(t, func() { f.do(t, ft) })
						line := fmt.Sprintf("%-60s lost %3d/%d  outage %6v  BFD down %6v  TCP kept %-5v gateway %s  new SNAT %s",
							name, r.sent-r.received, r.sent, r.outage.Round(time.Millisecond), r.detect.Round(time.Millisecond), r.tcpKept, r.holder, r.newSNAT)
						table = append(table, line)
						t.Log(line)
					})
				}
			}
		}
	}
	t.Logf("\n%s", strings.Join(table, "\n"))
}
