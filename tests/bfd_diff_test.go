package tests

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
	"github.com/gvs-project/gvs/ofproto/bfd"
)

// bfdStep is one step of a BFD scenario: a command, or a wait (sleep
// set) that lets the sessions move on in real time.
type bfdStep struct {
	args  []string // "ovs-vsctl ..." / "ovs-appctl ..." / "ovs-ofctl ..."
	sleep time.Duration
	// grep prints the switch's log lines (without their time and
	// sequence prefix) that contain the text.
	grep string
	// monitor starts `ovs-ofctl monitor` with these arguments in the
	// background; monitorOut stops it and prints the port status
	// messages it got for the port named monitorOut.
	monitor    []string
	monitorOut string
	// keep, if set, keeps only the output lines that contain one of
	// these (bfd.at's BFD_CHECK_RX style checks).
	keep []string
}

func bfdCmd(args ...string) bfdStep   { return bfdStep{args: args} }
func bfdWait(d time.Duration) bfdStep { return bfdStep{sleep: d} }

// bfdShowRE drops what differs on every run from bfd/show: times and
// discriminators (as Open vSwitch's bfd.at does).
var bfdShowRE = regexp.MustCompile(`(?m)^.*(Time:|Discriminator:).*\n`)

// bfdUsedRE masks a megaflow's last use.
var bfdUsedRE = regexp.MustCompile(`used:[0-9.]+s|duration=[0-9.]+s|idle_age=[0-9]+`)

// runBFDSteps runs steps against the switch whose control target is
// target and returns one transcript entry per command.
func runBFDSteps(env []string, target string, steps []bfdStep) []string {
	var out []string
	var mon *exec.Cmd
	var monBuf bytes.Buffer
	defer func() {
		if mon != nil {
			mon.Process.Kill()
			mon.Wait()
		}
	}()
	for _, st := range steps {
		if st.monitor != nil {
			mon = exec.Command("ovs-ofctl", st.monitor...)
			mon.Env, mon.Stdout, mon.Stderr = env, &monBuf, &monBuf
			if err := mon.Start(); err != nil {
				out = append(out, err.Error())
				mon = nil
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if st.monitorOut != "" && mon != nil {
			mon.Process.Kill()
			mon.Wait()
			mon = nil
			out = append(out, "$ monitor "+st.monitorOut+"\n"+portStatusFor(monBuf.String(), st.monitorOut))
			continue
		}
		if st.sleep > 0 {
			time.Sleep(st.sleep)
			continue
		}
		if st.grep != "" {
			out = append(out, "$ grep "+st.grep+"\n"+grepLog(env, target, st.grep))
			continue
		}
		args := append([]string(nil), st.args[1:]...)
		switch st.args[0] {
		case "ovs-appctl":
			args = append([]string{"-t", target}, args...)
		default:
			args = append([]string{"--timeout=10"}, args...)
		}
		c := exec.Command(st.args[0], args...)
		c.Env = env
		b, err := c.CombinedOutput()
		rc := 0
		if ee, ok := err.(*exec.ExitError); ok {
			rc = ee.ExitCode()
		} else if err != nil {
			rc = -1
		}
		text := bfdShowRE.ReplaceAllString(string(b), "")
		text = ovsoracle.MaskPortMACs(text)
		if st.keep != nil {
			var kept []string
			for _, l := range strings.Split(text, "\n") {
				for _, k := range st.keep {
					if strings.Contains(l, k) {
						kept = append(kept, l)
						break
					}
				}
			}
			text = strings.Join(kept, "\n") + "\n"
		}
		text = bfdUsedRE.ReplaceAllString(text, "used:T")
		text = strings.ReplaceAll(text, target, "SWITCH")
		out = append(out, fmt.Sprintf("$ %s  [exit %d]\n%s", strings.Join(st.args, " "), rc, text))
	}
	return out
}

// portStatusFor returns the port status messages about port in an
// ovs-ofctl monitor transcript (bfd.at's check_liveness): the message
// line and its config and state, without xids and MACs.
func portStatusFor(text, port string) string {
	var b strings.Builder
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "OFPT_PORT_STATUS") || !strings.Contains(l, "("+port+")") {
			continue
		}
		b.WriteString(ovsoracle.MaskPortMACs(ovsoracle.MaskXIDs(l)) + "\n")
		for _, m := range lines[i+1 : min(i+3, len(lines))] {
			b.WriteString(m + "\n")
		}
	}
	return b.String()
}

// grepLog returns the lines of target's log file in $OVS_LOGDIR that
// contain text, without the time and sequence number.
func grepLog(env []string, target, text string) string {
	dir := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "OVS_LOGDIR="); ok {
			dir = v
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, target+".log"))
	if err != nil {
		return err.Error()
	}
	// Each distinct line once: Open vSwitch repeats a configuration
	// warning at every reconfiguration, as often as its database changes.
	var out strings.Builder
	seen := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if l = ovsoracle.StripLogPrefixes(l); strings.Contains(l, text) && !seen[l] {
			seen[l] = true
			out.WriteString(l + "\n")
		}
	}
	return out.String()
}

// bfdPatchSetup is bfd.at's: br0 and br1 (dummy datapath) joined by the
// patch ports p0 and p1, and on br1 the dummy ports p3 and p4 that a
// fast-failover group chooses between by p1's liveness.
func bfdPatchSetup() []bfdStep {
	return []bfdStep{
		bfdCmd("ovs-vsctl", "init"),
		bfdCmd("ovs-vsctl", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-port", "br0", "p0", "--", "set", "interface", "p0", "type=patch", "options:peer=p1", "ofport_request=1",
			"--", "add-port", "br1", "p1", "--", "set", "interface", "p1", "type=patch", "options:peer=p0", "ofport_request=1",
			"--", "add-port", "br1", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3",
			"--", "add-port", "br1", "p4", "--", "set", "interface", "p4", "type=dummy", "ofport_request=4"),
		bfdCmd("ovs-ofctl", "-O", "OpenFlow13", "add-group", "br1", "group_id=1,type=fast_failover,bucket=watch_port:1,output:3,bucket=watch_port:4,output:4"),
		bfdCmd("ovs-ofctl", "-O", "OpenFlow13", "add-flow", "br1", "in_port=LOCAL,actions=group:1"),
	}
}

// bfdObserve reads everything the scenario compares after each phase.
func bfdObserve() []bfdStep {
	return []bfdStep{
		bfdCmd("ovs-appctl", "bfd/show", "p0"),
		bfdCmd("ovs-appctl", "bfd/show", "p1"),
		bfdCmd("ovs-vsctl", "get", "interface", "p0", "bfd_status"),
		bfdCmd("ovs-vsctl", "get", "interface", "p1", "bfd_status"),
		bfdCmd("ovs-appctl", "ofproto/trace", "br1", "in_port=LOCAL,dl_src=50:54:00:00:00:03,dl_dst=50:54:00:00:00:04"),
		bfdCmd("ovs-ofctl", "-O", "OpenFlow13", "dump-ports-desc", "br1", "p1"),
	}
}

// bfdScenario: sessions come up, p0's BFD goes away (p1 expires after
// its detect time), comes back, p1's min_rx decays on the idle link, and
// bfd/set-forwarding overrides p1's decision.
func bfdScenario() []bfdStep {
	min := []string{"bfd:min_rx=100", "bfd:min_tx=100"}
	s := bfdPatchSetup()
	// Port status messages (miss_send_len set, so that the service
	// connection gets them), as bfd.at's liveness propagation tests.
	s = append(s, bfdStep{monitor: []string{"-O", "OpenFlow13", "monitor", "br1", "65535"}})
	s = append(s, bfdCmd(append([]string{"ovs-vsctl", "set", "interface", "p0", "bfd:enable=true"}, min...)...),
		bfdCmd(append([]string{"ovs-vsctl", "set", "interface", "p1", "bfd:enable=true"}, min...)...),
		bfdWait(3500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p0", "bfd:enable=false"), bfdWait(1500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p0", "bfd:enable=true"), bfdWait(3500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p1", "bfd:decay_min_rx=300"), bfdWait(3500*time.Millisecond))
	s = append(s, bfdObserve()...)
	// Data across the link ends p1's decay (bfd.at's decay Test-2): the
	// patch port's received packets outnumber the control packets.
	for range 40 {
		s = append(s, bfdCmd("ovs-ofctl", "packet-out", "br0",
			"in_port=LOCAL packet=90e2ba01475000101856b2e80806000108000604000100101856b2e80202020300000000000002020202 actions=output:1"),
			bfdWait(60*time.Millisecond))
	}
	// Whether the last packet p1 got was the poll's Final is timing.
	s = append(s, bfdStep{args: []string{"ovs-appctl", "bfd/show", "p1"}, keep: []string{"RX Interval", "Session State", "Forwarding"}})
	s = append(s, bfdCmd("ovs-appctl", "bfd/set-forwarding", "p1", "false"), bfdWait(500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s, bfdCmd("ovs-appctl", "bfd/set-forwarding", "p1", "normal"), bfdWait(500*time.Millisecond))
	s = append(s, bfdObserve()...)
	// Timer and multiplier changes go through poll sequences; the peer
	// follows (bfd.at's BFD_CHECK_TX / BFD_CHECK_MULT).
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p0", "bfd:min_tx=200", "bfd:mult=5"), bfdWait(1500*time.Millisecond))
	s = append(s, bfdObserve()...)
	// Concatenated path down: p1 stops forwarding, on p0's diagnostic.
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p0", "bfd:cpath_down=true"), bfdWait(1500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s, bfdCmd("ovs-vsctl", "remove", "interface", "p0", "bfd", "cpath_down"), bfdWait(1500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s,
		bfdCmd("ovs-appctl", "bfd/set-forwarding", "p9", "true"),
		bfdCmd("ovs-appctl", "bfd/set-forwarding", "p1", "sometimes"),
		bfdCmd("ovs-appctl", "bfd/show", "p9"),
		bfdCmd("ovs-vsctl", "del-port", "br0", "p0"), bfdWait(1500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s, bfdStep{monitorOut: "p1"},
		// Sessions go with their bridges (bfd.at's basic config).
		bfdCmd("ovs-vsctl", "del-br", "br0"), bfdCmd("ovs-vsctl", "del-br", "br1"),
		bfdCmd("ovs-appctl", "bfd/show", "p1"), bfdCmd("ovs-appctl", "bfd/show"))
	return s
}

// diffBFDScenario runs scenario on Open vSwitch 3.1 and on gvs (at
// once when concurrent: the real-time scenarios take as long once as
// twice) and requires the same output at every step, after normalize
// when given. It returns gvs's ovs-vsctl/ovs-appctl environment.
func diffBFDScenario(t *testing.T, scenario func() []bfdStep, concurrent bool, normalize func(string) string) []string {
	t.Helper()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, _ := startOpenVSwitch(t)
	_, gvsEnv := startDaemon(t)
	var want, got []string
	if concurrent {
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); want = runBFDSteps(ovsEnv, "ovs-vswitchd", scenario()) }()
		go func() { defer wg.Done(); got = runBFDSteps(gvsEnv, "gvs-vswitchd", scenario()) }()
		wg.Wait()
	} else {
		want = runBFDSteps(ovsEnv, "ovs-vswitchd", scenario())
		got = runBFDSteps(gvsEnv, "gvs-vswitchd", scenario())
	}
	if testing.Verbose() {
		t.Log(strings.Join(got, "\n"))
	}
	for i := range want {
		if normalize != nil {
			want[i], got[i] = normalize(want[i]), normalize(got[i])
		}
		if got[i] != want[i] {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
	return gvsEnv
}

// TestBFDLikeOpenVSwitch runs the same BFD scenario on Open vSwitch 3.1
// and gvs at once (real time, 100 ms intervals) and requires the same
// bfd/show (without times and discriminators), bfd_status, fast-failover
// choice and OpenFlow port state after every phase.
func TestBFDLikeOpenVSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs BFD sessions in real time for 20 s")
	}
	diffBFDScenario(t, bfdScenario, true, nil)
}

// bfdFrame is a control packet as a peer at 169.254.1.0 sends it to the
// port (hex for netdev-dummy/receive), with IPv4 TTL ttl and payload
// msg (a message's bytes, possibly malformed).
func bfdFrame(ttl uint8, msg []byte) string {
	b := []byte{0x00, 0x23, 0x20, 0x00, 0x00, 0x01, 0x50, 0x54, 0x00, 0x00, 0x00, 0x05, 0x08, 0x00}
	ipLen := 20 + 8 + len(msg)
	ip := []byte{0x45, 0xc0, byte(ipLen >> 8), byte(ipLen), 0, 0, 0, 0, ttl, 17, 0, 0, 169, 254, 1, 0, 169, 254, 1, 1}
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	ip[10], ip[11] = byte(^sum>>8), byte(^sum)
	b = append(b, ip...)
	udpLen := 8 + len(msg)
	b = append(b, 0xc0, 0x00, 0x0e, 0xc8, byte(udpLen>>8), byte(udpLen), 0, 0)
	return hex.EncodeToString(append(b, msg...))
}

// bfdODPFlow is a control packet's flow to UDP port dst, in the datapath
// syntax ofproto/trace takes.
func bfdODPFlow(dst int) string {
	return fmt.Sprintf("in_port(5),eth(src=50:54:00:00:00:05,dst=00:23:20:00:00:01),eth_type(0x0800),"+
		"ipv4(src=169.254.1.0,dst=169.254.1.1,proto=17,tos=0xc0,ttl=255,frag=no),udp(src=49152,dst=%d)", dst)
}

// bfdMsg encodes a control message: state down unless flags say
// otherwise, my_disc 0x99.
func bfdMsg(edit func(m *bfd.Msg)) []byte {
	m := bfd.Msg{VersDiag: 1 << 5, Flags: uint8(bfd.StateDown), Mult: 3, Length: 24, MyDisc: 0x99, MinTx: 1000000, MinRx: 1000000}
	if edit != nil {
		edit(&m)
	}
	return m.Encode(nil)
}

// bfdBadInputScenario: malformed control packets leave p5's session as
// it was (a good one then moves it to init), and on p6, which never
// hears from a peer (so that Open vSwitch's reconfigurations, which
// rerun on every database change, start no poll sequence), options out
// of range and not numbers are read as Open vSwitch reads them (clamped
// or defaulted; a decay_min_rx below min_rx and a bad bfd_src_ip refused
// with its log lines). The packets come first: Open vSwitch rate-limits
// the module's messages together (20 a burst) and repeats the option
// warnings at every reconfiguration.
func bfdBadInputScenario() []bfdStep {
	show := bfdCmd("ovs-appctl", "bfd/show", "p5")
	status := bfdCmd("ovs-vsctl", "get", "interface", "p5", "bfd_status")
	show6 := bfdCmd("ovs-appctl", "bfd/show", "p6")
	s := []bfdStep{
		bfdCmd("ovs-vsctl", "init"),
		bfdCmd("ovs-vsctl", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-port", "br0", "p5", "--", "set", "interface", "p5", "type=dummy", "ofport_request=5",
			"--", "add-port", "br0", "p6", "--", "set", "interface", "p6", "type=dummy", "ofport_request=6"),
		bfdCmd("ovs-ofctl", "add-flow", "br0", "actions=drop"),
		bfdCmd("ovs-vsctl", "set", "interface", "p5", "bfd:enable=true"),
		bfdWait(300 * time.Millisecond), show, status,
	}
	for _, pkt := range []string{
		bfdFrame(254, bfdMsg(nil)),
		bfdFrame(255, bfdMsg(nil)[:10]),
		bfdFrame(255, bfdMsg(func(m *bfd.Msg) { m.VersDiag = 2 << 5 })),
		bfdFrame(255, bfdMsg(func(m *bfd.Msg) { m.Flags |= bfd.FlagAuth })),
		bfdFrame(255, bfdMsg(func(m *bfd.Msg) { m.Length = 12 })),
		bfdFrame(255, bfdMsg(func(m *bfd.Msg) { m.Mult = 0 })),
		bfdFrame(255, bfdMsg(func(m *bfd.Msg) { m.Flags |= bfd.FlagMultipoint })),
		bfdFrame(255, bfdMsg(func(m *bfd.Msg) { m.MyDisc = 0 })),
		bfdFrame(255, bfdMsg(func(m *bfd.Msg) { m.YourDisc = 0x1234 })),
		bfdFrame(255, bfdMsg(func(m *bfd.Msg) { m.Flags = uint8(bfd.StateUp) })),
	} {
		s = append(s, bfdCmd("ovs-appctl", "netdev-dummy/receive", "p5", pkt))
	}
	s = append(s, bfdWait(300*time.Millisecond), show, status,
		bfdStep{grep: "too-short"}, bfdStep{grep: "Incorrect version"}, bfdStep{grep: "authentication disabled"},
		bfdStep{grep: "Unexpected length"}, bfdStep{grep: "Zero multiplier"}, bfdStep{grep: "multipoint"},
		bfdStep{grep: "NULL my_disc"}, bfdStep{grep: "Incorrect your_disc"}, bfdStep{grep: "Null your_disc"},
		bfdCmd("ovs-appctl", "netdev-dummy/receive", "p5", bfdFrame(255, bfdMsg(nil))),
		bfdWait(300*time.Millisecond), show, status,
		bfdCmd("ovs-appctl", "dpctl/dump-flows"),
		// Translation of a control packet and of one that is not: the
		// first table's rule is looked up and counted either way.
		bfdCmd("ovs-appctl", "ofproto/trace", "ovs-dummy", bfdODPFlow(3784)),
		bfdCmd("ovs-appctl", "ofproto/trace", "ovs-dummy", bfdODPFlow(3785)),
		bfdWait(1500*time.Millisecond),
		bfdCmd("ovs-ofctl", "dump-flows", "br0"),
		// Options.
		bfdCmd("ovs-vsctl", "set", "interface", "p6", "bfd:enable=true", "bfd:min_rx=0", "bfd:min_tx=0", "bfd:mult=0"),
		bfdWait(300*time.Millisecond), show6, bfdCmd("ovs-vsctl", "get", "interface", "p6", "bfd_status"),
		bfdCmd("ovs-vsctl", "set", "interface", "p6", "bfd:min_rx=fast", "bfd:min_tx=-7", "bfd:mult=256", "bfd:cpath_down=yes"),
		bfdWait(300*time.Millisecond), show6,
		bfdCmd("ovs-vsctl", "set", "interface", "p6", "bfd:min_rx=500", "bfd:min_tx=500", "bfd:mult=2", "bfd:decay_min_rx=200"),
		bfdWait(300*time.Millisecond), show6,
		bfdStep{grep: "decay_min_rx cannot be less than"},
		bfdCmd("ovs-vsctl", "set", "interface", "p6", "bfd:bfd_src_ip=not-an-ip"),
		bfdWait(300*time.Millisecond), show6,
		bfdStep{grep: "is not a valid IP address"})
	return s
}

// TestBFDBadInputLikeOpenVSwitch: bfdBadInputScenario on both switches.
func TestBFDBadInputLikeOpenVSwitch(t *testing.T) {
	gvsEnv := diffBFDScenario(t, bfdBadInputScenario, true, nil)
	// gvs also counts what it dropped: the ten malformed packets.
	if n := strings.TrimSpace(run(t, gvsEnv, "ovs-appctl", "-t", "gvs-vswitchd", "coverage/read-counter", "bfd_rx_drop")); n != "10" {
		t.Errorf("bfd_rx_drop = %s, want 10", n)
	}
}

// bfdTunnelFlow is a packet received on GRE port 1 with tunnel key key,
// from eth src to eth dst and IPv4 ipSrc to ipDst, UDP to 3784 (bfd.at's
// check_tnl_key and overlay cases).
func bfdTunnelFlow(key, flags, src, dst, ipSrc, ipDst string) string {
	return "tunnel(tun_id=" + key + ",src=2.2.2.2,dst=2.2.2.1,tos=0x0,ttl=64,tp_src=0,tp_dst=0,flags(" + flags + ")),in_port(1),skb_mark(0/0)," +
		"eth(src=" + src + ",dst=" + dst + "),eth_type(0x0800),ipv4(src=" + ipSrc + "/0.0.0.0,dst=" + ipDst + "/0.0.0.0,proto=17/0xff,tos=0/0,ttl=255/0,frag=no)," +
		"udp(src=49152/0,dst=3784/0xffff)"
}

// bfdTunnelScenario: control packets on a GRE port are the switch's as
// check_tnl_key and bfd_src_ip say (bfd.at's check_tnl_key and overlay):
// a keyed packet with check_tnl_key goes through the pipeline, and with
// bfd_src_ip set a packet to another address (overlay BFD) does too.
func bfdTunnelScenario() []bfdStep {
	trace := func(key, flags, src, dst, ipSrc, ipDst string) bfdStep {
		return bfdCmd("ovs-appctl", "ofproto/trace", "--l7-len", "0", "ovs-dummy", bfdTunnelFlow(key, flags, src, dst, ipSrc, ipDst), "-generate")
	}
	return []bfdStep{
		bfdCmd("ovs-vsctl", "init"),
		bfdCmd("ovs-vsctl", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=standalone",
			"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=gre", "options:remote_ip=2.2.2.2", "options:key=1",
			"ofport_request=1", "bfd:enable=true"),
		trace("0x1", "key", "00:11:22:33:44:55", "00:23:20:00:00:01", "169.254.1.0", "169.254.1.1"),
		bfdCmd("ovs-vsctl", "set", "interface", "p1", "bfd:check_tnl_key=true"),
		trace("0x1", "key", "00:11:22:33:44:55", "00:23:20:00:00:01", "169.254.1.0", "169.254.1.1"),
		bfdCmd("ovs-vsctl", "set", "interface", "p1", "options:key=0"),
		trace("0x0", "key", "00:11:22:33:44:55", "00:23:20:00:00:01", "169.254.1.0", "169.254.1.1"),
		bfdCmd("ovs-vsctl", "set", "interface", "p1", "options:key=0", "bfd:check_tnl_key=false", "bfd:bfd_src_ip=2.2.2.1"),
		bfdCmd("ovs-vsctl", "remove", "interface", "p1", "options", "key"),
		trace("0x0", "df", "00:11:22:33:44:55", "00:23:20:00:00:01", "2.2.2.2", "2.2.2.1"),
		trace("0x0", "df", "00:11:22:33:44:66", "00:23:20:00:00:77", "192.168.2.2", "192.168.2.1"),
	}
}

// bfdTraceVerdict reduces a trace to what BFD decides: for a packet the
// switch takes, the slow-path explanation and the megaflow (the bits
// bfd_should_process_flow read); for one that goes through the pipeline,
// that it does (NORMAL's output differs by design: gvs's mac_learn).
func bfdTraceVerdict(step string) string {
	if !strings.Contains(step, "ofproto/trace") {
		return step
	}
	head, _, _ := strings.Cut(step, "\n")
	if !strings.Contains(step, "Consists of BFD packets.") {
		return head + "\npipeline\n"
	}
	for _, l := range strings.Split(step, "\n") {
		if strings.HasPrefix(l, "Megaflow:") {
			return head + "\nslow path (BFD)\n" + l + "\n"
		}
	}
	return step
}

// TestBFDOnTunnelPortsLikeOpenVSwitch: in bfdTunnelScenario gvs takes
// the same packets as Open vSwitch for BFD, with the same megaflows.
func TestBFDOnTunnelPortsLikeOpenVSwitch(t *testing.T) {
	diffBFDScenario(t, bfdTunnelScenario, false, bfdTraceVerdict)
}

// bfdThroughSwitchScenario is bfd.at's "Verify tunnel down detection":
// br-bfd0 and br-bfd1 reach each other through br-sw (patch ports,
// NORMAL in br-sw, which gvs runs as the datapath's mac_learn with
// recirculation into the patch peers), and flows in br-sw cut the path
// both ways, then one way.
func bfdThroughSwitchScenario() []bfdStep {
	show := []bfdStep{bfdCmd("ovs-appctl", "bfd/show", "p0"), bfdCmd("ovs-appctl", "bfd/show", "p1")}
	min := []string{"bfd:min_rx=100", "bfd:min_tx=100"}
	s := []bfdStep{
		bfdCmd("ovs-vsctl", "init"),
		bfdCmd("ovs-vsctl", "add-br", "br-bfd0", "--", "set", "bridge", "br-bfd0", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-br", "br-bfd1", "--", "set", "bridge", "br-bfd1", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-br", "br-sw", "--", "set", "bridge", "br-sw", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-port", "br-sw", "p1-sw", "--", "set", "interface", "p1-sw", "type=patch", "options:peer=p1", "ofport_request=2",
			"--", "add-port", "br-sw", "p0-sw", "--", "set", "interface", "p0-sw", "type=patch", "options:peer=p0", "ofport_request=1",
			"--", "add-port", "br-bfd1", "p1", "--", "set", "interface", "p1", "type=patch", "options:peer=p1-sw", "bfd:enable=true", min[0], min[1],
			"--", "add-port", "br-bfd0", "p0", "--", "set", "interface", "p0", "type=patch", "options:peer=p0-sw", "bfd:enable=true", min[0], min[1]),
		bfdCmd("ovs-ofctl", "add-flow", "br-sw", "priority=0,actions=NORMAL"),
		bfdWait(3500 * time.Millisecond),
	}
	s = append(s, show...)
	s = append(s, bfdCmd("ovs-ofctl", "add-flow", "br-sw", "priority=5,actions=drop"), bfdWait(1500*time.Millisecond))
	s = append(s, show...)
	s = append(s, bfdCmd("ovs-ofctl", "del-flows", "br-sw"), bfdCmd("ovs-ofctl", "add-flow", "br-sw", "priority=0,actions=NORMAL"),
		bfdWait(3500*time.Millisecond))
	s = append(s, show...)
	// p1 hears nothing from p0; p0 still hears p1, which says down.
	s = append(s, bfdCmd("ovs-ofctl", "add-flow", "br-sw", "in_port=1,priority=5,actions=drop"), bfdWait(2500*time.Millisecond))
	s = append(s, show...)
	return s
}

// TestBFDThroughABridgeLikeOpenVSwitch: bfdThroughSwitchScenario on
// both switches.
func TestBFDThroughABridgeLikeOpenVSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs BFD sessions in real time for 11 s")
	}
	diffBFDScenario(t, bfdThroughSwitchScenario, true, nil)
}

// bfdEnabledAtAddScenario is bfd.at's liveness propagation: patch ports
// added with BFD already enabled, in one transaction, watched by a
// monitor from before. The port is announced not live (its session
// starts down) and becomes live when BFD comes up.
func bfdEnabledAtAddScenario() []bfdStep {
	return []bfdStep{
		bfdCmd("ovs-vsctl", "init"),
		bfdCmd("ovs-vsctl", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure"),
		{monitor: []string{"-O", "OpenFlow13", "monitor", "br0", "65535"}},
		bfdCmd("ovs-vsctl", "add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy",
			"--", "add-port", "br1", "p1", "--", "set", "interface", "p1", "type=patch", "options:peer=p0", "ofport_request=2",
			"--", "add-port", "br0", "p0", "--", "set", "interface", "p0", "type=patch", "options:peer=p1", "ofport_request=1",
			"--", "set", "interface", "p0", "bfd:enable=true", "bfd:min_tx=100", "bfd:min_rx=100",
			"--", "set", "interface", "p1", "bfd:enable=true", "bfd:min_tx=100", "bfd:min_rx=100"),
		bfdWait(2500 * time.Millisecond),
		bfdCmd("ovs-ofctl", "-O", "OpenFlow13", "dump-ports-desc", "br0", "p0"),
		{monitorOut: "p0"},
	}
}

// TestBFDPortAddedWithBFDIsNotLiveUntilUpLikeOpenVSwitch: the ADD port
// status says state 0, then a MOD says LIVE (gvs announced LIVE at once
// and never sent the MOD).
func TestBFDPortAddedWithBFDIsNotLiveUntilUpLikeOpenVSwitch(t *testing.T) {
	diffBFDScenario(t, bfdEnabledAtAddScenario, true, nil)
}
