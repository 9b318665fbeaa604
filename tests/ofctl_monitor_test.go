package tests

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// bgTool is a long-running tool (monitor, snoop) whose stdout and stderr
// go to one file.
type bgTool struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func startTool(t *testing.T, env []string, bin string, args ...string) *bgTool {
	t.Helper()
	log := filepath.Join(t.TempDir(), filepath.Base(bin)+".log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(bin, args...)
	c.Env, c.Stdout, c.Stderr = env, f, f
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	bt := &bgTool{name: filepath.Base(bin), cmd: c, log: log, done: make(chan struct{})}
	go func() { c.Wait(); f.Close(); close(bt.done) }()
	t.Cleanup(func() { c.Process.Kill(); <-bt.done })
	return bt
}

// packetIns waits (up to 10s) until an ovs-ofctl monitor's transcript
// holds n packet-ins, then a little longer so that a wrong extra one shows,
// and returns the transcript.
func (bt *bgTool) packetIns(n int) string {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(bt.log); strings.Count(string(b), "NXT_PACKET_IN") >= n {
			break
		}
	}
	time.Sleep(300 * time.Millisecond)
	b, _ := os.ReadFile(bt.log)
	return string(b)
}

// output waits (up to 10s) for the tool to exit, which it does when the
// switch goes away, and returns its transcript and exit code.
func (bt *bgTool) output(t *testing.T) string {
	t.Helper()
	select {
	case <-bt.done:
	case <-time.After(10 * time.Second):
		bt.cmd.Process.Kill()
		<-bt.done
		b, _ := os.ReadFile(bt.log)
		t.Fatalf("%s did not exit when the switch stopped:\n%s", bt.name, b)
	}
	b, _ := os.ReadFile(bt.log)
	return string(b) + "[exit " + itoa(bt.cmd.ProcessState.ExitCode()) + "]\n"
}

// stop ends the tool and returns its transcript.
func (bt *bgTool) stop(t *testing.T) string {
	t.Helper()
	bt.cmd.Process.Signal(syscall.SIGTERM)
	<-bt.done
	b, _ := os.ReadFile(bt.log)
	return string(b)
}

// startOF14Monitor starts `ovs-ofctl -O OpenFlow14 monitor br0` with a
// control socket of its own and sets its miss_send_len to 128 (a
// service connection gets asynchronous messages only then, in Open
// vSwitch as in gvs). It returns the monitor and ovs-appctl against it.
func startOF14Monitor(t *testing.T, env []string) (*bgTool, func(args ...string)) {
	t.Helper()
	ctl := filepath.Join(t.TempDir(), "mon")
	mon := startTool(t, env, "ovs-ofctl", "-O", "OpenFlow14", "monitor", "br0", "--unixctl="+ctl)
	waitFor(t, "the monitor's control socket", func() bool { _, err := os.Stat(ctl); return err == nil })
	appctl := func(args ...string) { run(t, env, append([]string{"ovs-appctl", "-t", ctl}, args...)...) }
	appctl("ofctl/barrier")
	appctl("ofctl/send", "0509000c0123456700000080") // set_config: miss_send_len 128
	return mon, appctl
}

// monProgRE matches the program name that starts ovs-ofctl's and
// gvs-ofctl's error messages.
var monProgRE = regexp.MustCompile(`(?m)^(ovs|gvs)-ofctl: `)

// maskMonitor masks what differs on every run: flow durations, port
// MAC addresses, the datapath id and the tool's name.
func maskMonitor(s string) string {
	s = ovsoracle.DropLogLines(s)
	s = ovsoracle.MaskDurations(s)
	s = ovsoracle.MaskPortMACs(s)
	s = ovsoracle.MaskDPIDs(s)
	return monProgRE.ReplaceAllString(s, "ofctl: ")
}

// A TCP SYN 10.0.0.1:1234 -> 10.0.0.2:80, and one from 192.168.0.1.
const (
	monPktIn  = "50540000000a5054000000090800450000280000000040067ac00a0000010a00000204d2005000000000000000005002200000000000"
	monPktOut = "505400000001505400000002080045000028000000004006f97cc0a80001c0a800020000000000000000000000005000000000000000"
)

// monitorSession runs `ovs-ofctl monitor br0 65535` and `gvs-ofctl
// monitor br0 65535` side by side while the switch sends each kind of
// asynchronous message (packet-ins from a flow's controller action and
// from a packet-out, port-status for a port added and deleted,
// flow-removed for a send_flow_rem flow deleted), and returns both
// transcripts.
func monitorSession(t *testing.T, env []string, target, gvsOfctl string) (ovsOut, gvsOut string) {
	t.Helper()
	setUpOfctlBridge(t, env)
	ovsMon := startTool(t, env, "ovs-ofctl", "monitor", "br0", "65535")
	gvsMon := startTool(t, env, gvsOfctl, "monitor", "br0", "65535")
	// Without a miss_send_len a service connection gets no asynchronous
	// messages at all.
	quiet := startTool(t, env, gvsOfctl, "monitor", "br0")
	time.Sleep(700 * time.Millisecond) // the monitors' set-up transactions
	settle := func() { time.Sleep(300 * time.Millisecond) }
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,actions=controller")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "priority=6,send_flow_rem,ip,nw_dst=10.0.0.9,actions=drop")
	run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p1", monPktIn)
	settle()
	run(t, env, "ovs-ofctl", "packet-out", "br0", "in_port=controller packet="+monPktOut+" actions=controller")
	settle()
	run(t, env, "ovs-vsctl", "--timeout=20", "add-port", "br0", "p5", "--", "set", "interface", "p5", "type=dummy", "ofport_request=5")
	settle()
	run(t, env, "ovs-vsctl", "--timeout=20", "del-port", "br0", "p5")
	settle()
	run(t, env, "ovs-ofctl", "del-flows", "br0", "ip")
	settle()
	if out := quiet.stop(t); out != "" {
		t.Errorf("%s: monitor without MISSLEN printed\n%s", target, out)
	}
	return maskMonitor(ovsMon.stop(t)), maskMonitor(gvsMon.stop(t))
}

// TestOfctlMonitorPrintsAsyncMessagesLikeOpenVSwitch runs Debian's
// ovs-ofctl monitor and gvs-ofctl monitor against Open vSwitch (dummy
// datapath) and against gvs-vswitchd through one scripted session; all
// four transcripts must be the same once durations and MACs are masked.
func TestOfctlMonitorPrintsAsyncMessagesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	wantOVS, wantGVS, gotOVS, gotGVS := bothTools(t, monitorSession)
	if !strings.Contains(wantOVS, "OFPT_FLOW_REMOVED") || !strings.Contains(wantOVS, "OFPT_PORT_STATUS") ||
		!strings.Contains(wantOVS, "NXT_PACKET_IN2") {
		t.Fatalf("Open vSwitch's session lacks a message kind:\n%s", wantOVS)
	}
	for _, c := range []struct{ what, got string }{
		{"gvs-ofctl monitor against Open vSwitch", wantGVS},
		{"ovs-ofctl monitor against gvs", gotOVS},
		{"gvs-ofctl monitor against gvs", gotGVS},
	} {
		if c.got != wantOVS {
			t.Errorf("%s differs\n--- ovs-ofctl monitor against Open vSwitch:\n%s\n--- %s:\n%s", c.what, wantOVS, c.what, c.got)
		}
	}
}

// snoopController is an OpenFlow controller driven by the test: it
// records what the switch sends and sends what the test asks for.
type snoopController struct {
	srv  *ofconn.Server
	msgs chan *ofp.Msg
}

func startSnoopController(t *testing.T, dir string) (*snoopController, string) {
	t.Helper()
	sc := &snoopController{msgs: make(chan *ofp.Msg, 64)}
	sc.srv = &ofconn.Server{Handler: ofconn.HandlerFunc(func(s ofconn.Sender, m *ofp.Msg) {
		select {
		case sc.msgs <- m:
		default:
		}
	}), Config: ofconn.Config{Versions: []uint8{4}}}
	// Open vSwitch connects only to unix sockets in its run directory.
	sock := filepath.Join(dir, "ctl.sock")
	if _, err := sc.srv.Listen("punix:" + sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.srv.Close() })
	return sc, "unix:" + sock
}

func (sc *snoopController) conn(t *testing.T) *ofconn.Conn {
	t.Helper()
	var c *ofconn.Conn
	waitFor(t, "the switch to connect to the controller", func() bool {
		if cs := sc.srv.Conns(); len(cs) > 0 {
			c = cs[0]
		}
		return c != nil
	})
	return c
}

// expect waits for a message of type raw from the switch.
func (sc *snoopController) expect(t *testing.T, raw ofp.Raw) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-sc.msgs:
			if m.Raw == raw {
				return
			}
		case <-deadline:
			t.Fatalf("the controller got no %s", raw)
		}
	}
}

// snoopSession connects br0 to a controller the test drives, starts
// `ovs-ofctl snoop br0` and `gvs-ofctl snoop br0`, exchanges requests,
// replies and a packet-in (from a packet injected into p1) with the
// switch, and returns both snoop transcripts.
func snoopSession(t *testing.T, env []string, target, gvsOfctl string) (ovsOut, gvsOut string) {
	t.Helper()
	setUpOfctlBridge(t, env)
	var rundir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OVS_RUNDIR="); ok {
			rundir = v
		}
	}
	sc, ctl := startSnoopController(t, rundir)
	run(t, env, "ovs-vsctl", "--timeout=20", "set-controller", "br0", ctl)
	c := sc.conn(t)
	ovsSnoop := startTool(t, env, "ovs-ofctl", "snoop", "br0")
	gvsSnoop := startTool(t, env, gvsOfctl, "snoop", "br0")
	time.Sleep(time.Second) // both snoopers' hello exchanges
	send := func(xid uint32, m ofp.Message, reply ofp.Raw) {
		t.Helper()
		if err := c.Send(xid, m); err != nil {
			t.Fatal(err)
		}
		if reply != 0 {
			sc.expect(t, reply)
		}
	}
	send(0x10, &ofp.FeaturesRequest{}, ofp.RawOFPT13_FEATURES_REPLY)
	send(0x11, &ofp.SetConfig{SwitchConfig: ofp.SwitchConfig{MissSendLen: 0xffff}}, 0)
	send(0x12, &ofp.GetConfigRequest{}, ofp.RawOFPT_GET_CONFIG_REPLY)
	send(0x13, &ofp.EchoRequest{Data: []byte("gvs")}, ofp.RawOFPT_ECHO_REPLY)
	toCtl, err := ofp.AppendActions(nil, []ofp.Action{{Type: ofp.ActOutput, Port: 0xfffd, MaxLen: 0xffff}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	pkt, _ := hex.DecodeString(monPktOut)
	send(0x14, &ofp.PacketOut{BufferID: ofp.BufferNone, InPort: 0xfffffffd, Actions: toCtl, Data: pkt}, ofp.RawOFPT13_PACKET_IN)
	send(0x15, &ofp.BarrierRequest{}, ofp.RawOFPT11_BARRIER_REPLY)
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,actions=controller")
	run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p1", monPktIn)
	sc.expect(t, ofp.RawOFPT13_PACKET_IN)
	send(0x16, &ofp.BarrierRequest{}, ofp.RawOFPT11_BARRIER_REPLY)
	time.Sleep(300 * time.Millisecond)
	return maskMonitor(ovsSnoop.stop(t)), maskMonitor(gvsSnoop.stop(t))
}

// bothTools runs session (which drives Debian's ovs-ofctl and gvs-ofctl
// side by side) against Open vSwitch and then against gvs-vswitchd, and
// returns the two tools' transcripts from each switch.
func bothTools(t *testing.T, session func(t *testing.T, env []string, target, gvsOfctl string) (string, string)) (wantOVS, wantGVS, gotOVS, gotGVS string) {
	t.Helper()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvsOfctl := gvsOfctlBinary(t)
	ovsEnv, stopOVS := startOpenVSwitch(t)
	wantOVS, wantGVS = session(t, ovsEnv, "ovs-vswitchd", gvsOfctl)
	stopOVS()
	_, gvsEnv := startDaemon(t)
	gotOVS, gotGVS = session(t, gvsEnv, "gvs-vswitchd", gvsOfctl)
	return wantOVS, wantGVS, gotOVS, gotGVS
}

// TestOfctlSnoopPrintsControllerTrafficLikeOpenVSwitch checks the
// <bridge>.snoop socket: Debian's ovs-ofctl snoop and gvs-ofctl snoop,
// run against gvs-vswitchd while a controller talks to br0, print every
// message of both directions, the same as ovs-ofctl snoop prints against
// Open vSwitch.
func TestOfctlSnoopPrintsControllerTrafficLikeOpenVSwitch(t *testing.T) {
	wantOVS, wantGVS, gotOVS, gotGVS := bothTools(t, snoopSession)
	for _, want := range []string{"OFPT_FEATURES_REQUEST", "OFPT_PACKET_OUT", "OFPT_PACKET_IN", "OFPT_BARRIER_REPLY"} {
		if !strings.Contains(wantOVS, want) {
			t.Fatalf("ovs-ofctl snoop against Open vSwitch lacks %s:\n%s", want, wantOVS)
		}
	}
	if gotOVS != gotGVS {
		t.Errorf("against gvs, the snoopers differ\n--- ovs-ofctl snoop:\n%s\n--- gvs-ofctl snoop:\n%s", gotOVS, gotGVS)
	}
	for _, c := range []struct{ what, got string }{
		{"gvs-ofctl snoop against Open vSwitch", wantGVS},
		{"ovs-ofctl snoop against gvs", gotOVS},
	} {
		if c.got != wantOVS {
			t.Errorf("%s differs\n--- ovs-ofctl snoop against Open vSwitch:\n%s\n--- %s:\n%s", c.what, wantOVS, c.what, c.got)
		}
	}
}

// TestOfctlMonitorInvalidTTLAndConnectionEnd runs `monitor br0
// invalid_ttl` with both tools against gvs: the switch keeps the flag
// (ovs-ofctl reads it back and would stop otherwise), and when the
// bridge goes away both end with "vconn_recv (End of file)", exit 1.
func TestOfctlMonitorInvalidTTLAndConnectionEnd(t *testing.T) {
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	gvsOfctl := gvsOfctlBinary(t)
	_, env := startDaemon(t)
	setUpOfctlBridge(t, env)
	mons := []*bgTool{startTool(t, env, "ovs-ofctl", "monitor", "br0", "invalid_ttl"),
		startTool(t, env, gvsOfctl, "monitor", "br0", "invalid_ttl")}
	time.Sleep(700 * time.Millisecond)
	run(t, env, "ovs-vsctl", "--timeout=20", "del-br", "br0")
	for _, m := range mons {
		out := maskMonitor(m.output(t))
		if want := "ofctl: vconn_recv (End of file)\n[exit 1]\n"; out != want {
			t.Errorf("%s monitor br0 invalid_ttl printed\n%s\nwant\n%s", m.name, out, want)
		}
	}
}

// TestPmdRxqShowListsEachWorkersQueuesInOpenVSwitchLayout runs Debian's
// ovs-appctl dpif-netdev/pmd-rxq-show against gvs-vswitchd with two
// PMD threads (two workers, two cores of one node): each dummy-pmd
// port's queue is listed under the thread polling it, in Open vSwitch
// 3.1's layout; plain dummy ports are the main thread's and not listed.
func TestPmdRxqShowListsEachWorkersQueuesInOpenVSwitchLayout(t *testing.T) {
	nstest.RequireBinary(t, "ovs-appctl", "openvswitch-common")
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	dir := t.TempDir()
	d, err := vswitchd.Start(&vswitchd.Config{
		Program: "gvs-vswitchd", RunDir: dir, DBDir: dir, LogDir: dir, Workers: 2, DummyNUMA: "0,0",
		DBFile: filepath.Join(dir, "conf.db"), Pidfile: filepath.Join(dir, "gvs-vswitchd.pid"),
		LogFile: filepath.Join(dir, "gvs-vswitchd.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy-pmd", "ofport_request=1",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy-pmd", "ofport_request=2",
		"--", "add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy-pmd", "ofport_request=3",
		"--", "add-port", "br0", "p4", "--", "set", "interface", "p4", "type=dummy", "ofport_request=4")
	// The cycles algorithm (nothing measured yet) deals the queues in
	// port order walking the threads up and down: p1 to core 0, p2 and
	// p3 to core 1.
	const w0 = "pmd thread numa_id 0 core_id 0:\n  isolated : false\n" +
		"  port: p1                queue-id:  0 (enabled)   pmd usage: NOT AVAIL\n" +
		"  overhead: NOT AVAIL\n"
	const w1 = "pmd thread numa_id 0 core_id 1:\n  isolated : false\n" +
		"  port: p2                queue-id:  0 (enabled)   pmd usage: NOT AVAIL\n" +
		"  port: p3                queue-id:  0 (enabled)   pmd usage: NOT AVAIL\n" +
		"  overhead: NOT AVAIL\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "Displaying last 60 seconds pmd usage %\n" + w0 + w1},
		{[]string{"-pmd", "1"}, "Displaying last 60 seconds pmd usage %\n" + w1},
		{[]string{"-secs", "10", "dummy@ovs-dummy"}, "Displaying last 10 seconds pmd usage %\n" + w0 + w1},
	} {
		args := append([]string{"ovs-appctl", "-t", "gvs-vswitchd", "dpif-netdev/pmd-rxq-show"}, c.args...)
		if got := run(t, env, args...); got != c.want {
			t.Errorf("pmd-rxq-show %v:\n%s\nwant:\n%s", c.args, got, c.want)
		}
	}
}

// snoopRefusedRE is how ovs-ofctl reports a snoop socket that closes at
// once (depending on timing, at its hello's send or at the receive).
var snoopRefusedRE = regexp.MustCompile(`^(ovs|gvs)-ofctl: (br0: failed to connect to socket|/\S+/br0\.snoop: failed to open socket) \((Connection reset by peer|End of file|Broken pipe)\)\n$`)

// TestOfctlSnoopWithoutAControllerFailsLikeOpenVSwitch: with no
// controller connection to snoop on, gvs closes the snoop connection, and
// both tools fail as ovs-ofctl does against Open vSwitch.
func TestOfctlSnoopWithoutAControllerFailsLikeOpenVSwitch(t *testing.T) {
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	gvsOfctl := gvsOfctlBinary(t)
	_, env := startDaemon(t)
	setUpOfctlBridge(t, env)
	for _, bin := range []string{"ovs-ofctl", gvsOfctl} {
		c := exec.Command(bin, "snoop", "br0")
		c.Env = env
		out, err := c.CombinedOutput()
		text := ovsoracle.DropLogLines(string(out))
		if c.ProcessState.ExitCode() != 1 || !snoopRefusedRE.MatchString(text) {
			t.Errorf("%s snoop br0 without a controller: %v\n%s", filepath.Base(bin), err, out)
		}
	}
}

// pausedMonitorSession pauses a packet (controller(pause) after setting
// reg0) while `ovs-ofctl monitor br0 resume` and `gvs-ofctl monitor br0
// resume` (OpenFlow 1.5, NXT_PACKET_IN2) both watch; each prints the
// packet-in with its continuation and sends it back with NXT_RESUME.
func pausedMonitorSession(t *testing.T, env []string, target, gvsOfctl string) (ovsOut, gvsOut string) {
	t.Helper()
	setUpOfctlBridge(t, env)
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,actions=load:5->NXM_NX_REG0[],controller(userdata=01.02,pause),resubmit(,1)")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "table=1,reg0=5,actions=output:2")
	args := []string{"-O", "OpenFlow15", "monitor", "br0", "resume", "-P", "nxt_packet_in2"}
	ovsMon := startTool(t, env, "ovs-ofctl", args...)
	gvsMon := startTool(t, env, gvsOfctl, args...)
	time.Sleep(700 * time.Millisecond)
	run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p1", pktFrom1)
	waitFor(t, "both resumed packets on p2", func() bool {
		return strings.Contains(run(t, env, "ovs-ofctl", "dump-ports", "br0", "2"), "tx pkts=2,")
	})
	mask := func(s string) string {
		return maskMonitor(contBridgeRE.ReplaceAllString(s, "continuation.bridge=<uuid>"))
	}
	return mask(ovsMon.stop(t)), mask(gvsMon.stop(t))
}

// TestOfctlMonitorResumesPausedPacketsLikeOpenVSwitch: gvs-ofctl monitor
// prints a paused packet-in's continuation as ovs-ofctl does and resumes
// it (the packet reaches p2), against Open vSwitch and against gvs.
func TestOfctlMonitorResumesPausedPacketsLikeOpenVSwitch(t *testing.T) {
	wantOVS, wantGVS, gotOVS, gotGVS := bothTools(t, pausedMonitorSession)
	if !strings.Contains(wantOVS, "continuation.") {
		t.Fatalf("Open vSwitch's packet-in has no continuation:\n%s", wantOVS)
	}
	for _, c := range []struct{ what, got string }{
		{"gvs-ofctl monitor against Open vSwitch", wantGVS},
		{"ovs-ofctl monitor against gvs", gotOVS},
		{"gvs-ofctl monitor against gvs", gotGVS},
	} {
		if c.got != wantOVS {
			t.Errorf("%s differs\n--- ovs-ofctl monitor against Open vSwitch:\n%s\n--- %s:\n%s", c.what, wantOVS, c.what, c.got)
		}
	}
}
