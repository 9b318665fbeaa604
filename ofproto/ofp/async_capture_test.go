package ofp_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/ovsoracle"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// asyncCapturesFile holds what Debian's ovs-ofctl and a real ovs-vswitchd
// (dummy datapath) exchanged for packet-out, bundles, TLV maps, conntrack
// flushes and monitor sessions (packet-ins in every format, flow-removed,
// port-status, NXT_RESUME), plus the switch's replies to role and
// get-async requests. Switch messages carry durations and counters, so
// the file is rewritten only with -update (testdata/capture.sh).
const asyncCapturesFile = "testdata/async_captures.txt"

// asyncPacket is the frame injected on p1: UDP 10.1.1.1:1 -> 10.2.2.2:2.
const asyncPacket = "in_port(1),eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x0800)," +
	"ipv4(src=10.1.1.1,dst=10.2.2.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)"

// asyncPacketHex is an Ethernet frame for packet-out commands.
const asyncPacketHex = "00000000000200000000000108004500002000000000401100000a0101010a02020200010002000c000000000000"

// asyncFlows are installed before the monitor sessions: packets from p1
// get metadata set and go to the controller (table 1) with userdata and
// a pause (table 2, only for cookie-marked traffic from p2).
var asyncFlows = []string{
	"table=0,priority=10,in_port=1,actions=load:0x5->NXM_NX_REG0[],load:0xabcd->NXM_NX_REG3[0..15],set_field:0x77->metadata,set_field:0x9->pkt_mark,resubmit(,1)",
	"table=1,cookie=0x1234,priority=5,actions=controller(max_len=65535,userdata=01.02.03.04.05)",
	"table=0,priority=10,in_port=2,actions=load:0x6->NXM_NX_REG1[],resubmit(,2)",
	"table=2,cookie=0x99,priority=5,actions=controller(pause),output:1",
}

// asyncSession is one recorded ovs-ofctl run through the proxy. For a
// monitor, trigger runs while it listens; the monitor is then stopped.
type asyncSession struct {
	name    string
	args    []string
	monitor bool
	trigger func(e *ovsEnv)
}

// ovsEnv is a private ovsdb-server + ovs-vswitchd with bridge br0.
type ovsEnv struct {
	t    *testing.T
	o    *ovsoracle.Switch
	dir  string
	mgmt string
	env  []string
}

func (e *ovsEnv) path(name string) string { return filepath.Join(e.dir, name) }

func (e *ovsEnv) run(name string, args ...string) {
	e.t.Helper()
	e.o.Run(name, args...)
}

func (e *ovsEnv) vsctl(args ...string) {
	e.t.Helper()
	e.run("ovs-vsctl", append([]string{"--db=unix:" + e.o.DBSock(), "--timeout=10"}, args...)...)
}

func (e *ovsEnv) receive(port, pkt string) {
	e.t.Helper()
	e.o.Receive(port, pkt)
}

// ofctl runs ovs-ofctl directly against the bridge (SOCK in args).
func (e *ovsEnv) ofctl(args ...string) {
	e.t.Helper()
	a := make([]string, len(args))
	for i, s := range args {
		if s == "SOCK" {
			s = "unix:" + e.mgmt
		}
		a[i] = s
	}
	e.run("ovs-ofctl", a...)
}

// startOVSForeground runs the daemons (the test owns their processes)
// with bridge br0 speaking every OpenFlow version and dummy ports p1
// and p2.
func startOVSForeground(t *testing.T) *ovsEnv {
	t.Helper()
	o := ovsoracle.Start(t, ovsoracle.Options{Init: true})
	e := &ovsEnv{t: t, o: o, dir: o.Dir, mgmt: o.Mgmt("br0"), env: o.Env}
	e.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"protocols=OpenFlow10,OpenFlow11,OpenFlow12,OpenFlow13,OpenFlow14,OpenFlow15")
	if err := ovsoracle.WaitFor(5*time.Second, func() bool { _, err := os.Stat(e.mgmt); return err == nil }); err != nil {
		t.Fatalf("%s did not appear", e.mgmt)
	}
	for i := 1; i <= 2; i++ {
		e.vsctl("add-port", "br0", fmt.Sprintf("p%d", i), "--", "set", "interface", fmt.Sprintf("p%d", i), "type=dummy",
			fmt.Sprintf("ofport_request=%d", i), fmt.Sprintf("mac_in_use=\"00:00:00:00:00:0%d\"", i))
	}
	return e
}

// asyncProxy relays connections from a unix socket to the switch,
// recording every message in each direction.
type asyncProxy struct {
	l      net.Listener
	target string
	wg     sync.WaitGroup
	mu     sync.Mutex
	recs   []captured // guarded by mu
}

func (p *asyncProxy) run() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("unix", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.wg.Add(2)
		go p.pump(c, s, true)
		go p.pump(s, c, false)
	}
}

func (p *asyncProxy) pump(from, to net.Conn, sent bool) {
	defer p.wg.Done()
	defer to.Close()
	for {
		b, err := readMsg(from)
		if err != nil {
			return
		}
		p.mu.Lock()
		p.recs = append(p.recs, captured{sent: sent, data: b})
		p.mu.Unlock()
		if _, err := to.Write(b); err != nil {
			return
		}
	}
}

func (p *asyncProxy) take() []captured {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.recs
	p.recs = nil
	return r
}

var asyncSessions = []asyncSession{
	{name: "of10_packet_out", args: []string{"-O", "OpenFlow10", "packet-out", "SOCK", "in_port=1,packet=" + asyncPacketHex + ",actions=output:2"}},
	{name: "of13_packet_out", args: []string{"-O", "OpenFlow13", "packet-out", "SOCK", "in_port=CONTROLLER,packet=" + asyncPacketHex + ",actions=output:2,output:1"}},
	{name: "of15_packet_out", args: []string{"-O", "OpenFlow15", "packet-out", "SOCK", "in_port=1,reg0=0x5,metadata=0x7,tun_id=0x9,packet=" + asyncPacketHex + ",actions=output:2"}},
	{name: "of14_bundle_add_flow", args: []string{"-O", "OpenFlow14", "--bundle", "add-flow", "SOCK", "table=3,priority=7,ip,nw_dst=10.0.0.1,actions=output:2"}},
	{name: "of15_bundle_del_flows", args: []string{"-O", "OpenFlow15", "--bundle", "del-flows", "SOCK", "table=3"}},
	{name: "of13_bundle_add_flow", args: []string{"-O", "OpenFlow13", "--bundle", "add-flow", "SOCK", "table=4,priority=8,arp,actions=drop"}},
	{name: "of14_bundle_file", args: []string{"-O", "OpenFlow14", "bundle", "SOCK", "BUNDLEFILE"}},
	{name: "add_tlv_map", args: []string{"add-tlv-map", "SOCK", "{class=0xffff,type=0,len=4}->tun_metadata0,{class=0x0102,type=0x80,len=8}->tun_metadata5"}},
	{name: "dump_tlv_map", args: []string{"dump-tlv-map", "SOCK"}},
	{name: "del_tlv_map", args: []string{"del-tlv-map", "SOCK", "{class=0xffff,type=0,len=4}->tun_metadata0"}},
	{name: "of13_dump_tlv_map", args: []string{"-O", "OpenFlow13", "dump-tlv-map", "SOCK"}},
	{name: "ct_flush_zone", args: []string{"ct-flush-zone", "SOCK", "5"}},
	{name: "ct_flush", args: []string{"-O", "OpenFlow13", "ct-flush", "SOCK", "zone=7",
		"ct_nw_src=10.1.1.1,ct_nw_dst=10.1.1.2,ct_nw_proto=6,ct_tp_src=1024,ct_tp_dst=80"}},
	{name: "ct_flush_icmp6", args: []string{"ct-flush", "SOCK", "ct_ipv6_src=fd00::1,ct_nw_proto=58,icmp_type=128,icmp_code=0,icmp_id=7",
		"ct_ipv6_dst=fd00::1"}},
	// Monitors: packet-in in each format and version, flow removed,
	// port status, and a paused packet-in resumed by ovs-ofctl.
	{name: "of10_monitor_std", args: []string{"-O", "OpenFlow10", "-P", "standard", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) { e.receive("p1", asyncPacket) }},
	{name: "of10_monitor_nxt", args: []string{"-O", "OpenFlow10", "-P", "nxt_packet_in", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) { e.receive("p1", asyncPacket) }},
	{name: "of10_monitor_pin2", args: []string{"-O", "OpenFlow10", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) { e.receive("p1", asyncPacket) }},
	{name: "of12_monitor_std", args: []string{"-O", "OpenFlow12", "-P", "standard", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) { e.receive("p1", asyncPacket) }},
	{name: "of11_monitor_std", args: []string{"-O", "OpenFlow11", "-P", "standard", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) { e.receive("p1", asyncPacket) }},
	{name: "of14_monitor_std", args: []string{"-O", "OpenFlow14", "-P", "standard", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) { e.receive("p1", asyncPacket) }},
	{name: "of13_monitor_std", args: []string{"-O", "OpenFlow13", "-P", "standard", "monitor", "SOCK", "128"}, monitor: true,
		trigger: func(e *ovsEnv) { e.receive("p1", asyncPacket) }},
	{name: "of15_monitor_pin2", args: []string{"-O", "OpenFlow15", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) { e.receive("p1", asyncPacket) }},
	{name: "of13_monitor_resume", args: []string{"-O", "OpenFlow13", "monitor", "SOCK", "65534", "resume"}, monitor: true,
		trigger: func(e *ovsEnv) {
			e.receive("p2", strings.Replace(asyncPacket, "in_port(1)", "in_port(2)", 1))
		}},
	{name: "of10_monitor_flow_removed", args: []string{"-O", "OpenFlow10", "-P", "standard", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) {
			e.ofctl("add-flow", "SOCK", "table=6,cookie=0x42,priority=3,hard_timeout=1,send_flow_rem,ip,nw_src=10.9.9.9,actions=drop")
		}},
	{name: "nxm_monitor_flow_removed", args: []string{"-O", "OpenFlow10", "-F", "nxm", "-P", "standard", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) {
			e.ofctl("add-flow", "SOCK", "table=6,cookie=0x43,priority=3,hard_timeout=1,idle_timeout=1,send_flow_rem,reg5=0x5,tcp,tp_dst=22,actions=drop")
		}},
	{name: "of13_monitor_flow_removed", args: []string{"-O", "OpenFlow13", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) {
			e.ofctl("-O", "OpenFlow13", "add-flow", "SOCK", "table=7,cookie=0x44,priority=4,hard_timeout=1,send_flow_rem,ipv6,ipv6_src=fd00::5,actions=drop")
		}},
	{name: "of15_monitor_flow_removed", args: []string{"-O", "OpenFlow15", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) {
			e.ofctl("-O", "OpenFlow15", "add-flow", "SOCK", "table=8,cookie=0x45,priority=5,hard_timeout=1,send_flow_rem,reg14=0x1,metadata=0x3,actions=drop")
		}},
	{name: "of10_monitor_port_status", args: []string{"-O", "OpenFlow10", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) {
			e.vsctl("add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3")
		}},
	{name: "of14_monitor_port_status", args: []string{"-O", "OpenFlow14", "monitor", "SOCK", "65534"}, monitor: true,
		trigger: func(e *ovsEnv) { e.vsctl("del-port", "br0", "p3") }},
}

// bundleFile is the input of the of14_bundle_file session.
const bundleFile = "flow add table=9,priority=1,in_port=1,actions=output:2\n" +
	"flow delete table=9,in_port=2\n" +
	"packet-out in_port=1,packet=" + asyncPacketHex + ",actions=output:2\n"

// asyncDirectMsgs are sent by a Go client (encoded by gvs) to record the
// switch's replies.
var asyncDirectMsgs = []struct {
	name    string
	v       uint8
	msgs    []ofp.Message
	trigger func(e *ovsEnv) // then the asynchronous messages are recorded for 2.5 s
}{
	{"of13_role_request", 4, []ofp.Message{
		&ofp.RoleRequest{Role: ofp.RoleMaster, GenerationID: 5},
		&ofp.RoleRequest{Role: ofp.RoleNoChange},
		&ofp.RoleRequest{Role: ofp.RoleSlave, GenerationID: 3}, // stale generation: error
	}, nil},
	{"nx_role_request", 1, []ofp.Message{&ofp.RoleRequest{Nicira: true, Role: ofp.NXRoleSlave}}, nil},
	{"of13_get_async", 4, []ofp.Message{&ofp.GetAsyncRequest{}}, nil},
	{"of14_set_get_async", 5, []ofp.Message{
		&ofp.AsyncConfig{Master: [ofp.NumAsyncKinds]uint32{ofp.AsyncPacketIn: 0x3, ofp.AsyncRoleStatus: 0x7},
			Present: 1<<(2*ofp.AsyncPacketIn+1) | 1<<(2*ofp.AsyncRoleStatus+1)},
		&ofp.GetAsyncRequest{},
	}, nil},
	{"nx_set_async_config", 1, []ofp.Message{
		&ofp.AsyncConfig{Nicira: true, Master: [ofp.NumAsyncKinds]uint32{0x1, 0x7, 0xf}, Slave: [ofp.NumAsyncKinds]uint32{0, 0x7, 0}},
	}, nil},
	{"of10_misc_session", 1, []ofp.Message{
		&ofp.SetControllerID{ID: 0x1234}, &ofp.FlowAgeExt{}, &ofp.FlowModTableID{Enable: true},
		&ofp.SetFlowFormat{Format: ofp.NXFFNXM}, &ofp.SetPacketInFormat{Format: ofp.PacketIn2},
	}, nil},
	{"nxm_flow_removed", 1, []ofp.Message{
		&ofp.SetFlowFormat{Format: ofp.NXFFNXM}, &ofp.FlowModTableID{Enable: true},
		&ofp.SetConfig{SwitchConfig: ofp.SwitchConfig{MissSendLen: 0xffff}},
	}, func(e *ovsEnv) {
		e.ofctl("add-flow", "SOCK", "table=6,cookie=0x43,priority=3,hard_timeout=1,send_flow_rem,reg5=0x5,tcp,tp_dst=22,actions=drop")
		e.ofctl("add-flow", "SOCK", "table=0,cookie=0x46,priority=2,hard_timeout=1,send_flow_rem,actions=drop")
	}},
	{"nxt_packet_in_of13", 4, []ofp.Message{
		&ofp.SetPacketInFormat{Format: ofp.PacketInNXT},
		&ofp.SetConfig{SwitchConfig: ofp.SwitchConfig{MissSendLen: 0xffff}},
	}, func(e *ovsEnv) { e.receive("p1", asyncPacket) }},
}

// recordDirect sends msgs (each followed by a barrier) and records the
// exchange.
func recordDirect(t *testing.T, e *ovsEnv, v uint8, msgs []ofp.Message, trigger func(*ovsEnv)) []captured {
	sock := e.mgmt
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	var recs []captured
	send := func(m ofp.Message, xid uint32) {
		b, err := ofp.Encode(nil, v, xid, m)
		if err != nil {
			t.Fatalf("encode %T: %v", m, err)
		}
		recs = append(recs, captured{sent: true, data: b})
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	// until reads (recording) up to the message with the given xid.
	until := func(xid uint32) {
		for {
			b, err := readMsg(c)
			if err != nil {
				t.Fatalf("reading reply: %v", err)
			}
			if b[1] == 0 { // the switch's hello
				continue
			}
			recs = append(recs, captured{data: b})
			if binary.BigEndian.Uint32(b[4:]) == xid && b[1] != 1 {
				return
			}
		}
	}
	send(&ofp.Hello{}, 1)
	for i, m := range msgs {
		xid := uint32(0x100 + 2*i)
		send(m, xid)
		send(&ofp.BarrierRequest{}, xid+1)
		until(xid + 1)
	}
	if trigger != nil {
		trigger(e)
		c.SetDeadline(time.Now().Add(2500 * time.Millisecond))
		for {
			b, err := readMsg(c)
			if err != nil {
				break
			}
			recs = append(recs, captured{data: b})
		}
	}
	return recs
}

// isTableFeatures reports whether msg is an OpenFlow 1.3+ table-features
// multipart request or reply.
func isTableFeatures(msg []byte) bool {
	return len(msg) >= 10 && msg[0] >= 4 && (msg[1] == 18 || msg[1] == 19) && binary.BigEndian.Uint16(msg[8:]) == 12
}

// recordAsync runs every session through a recording proxy in front of a
// real ovs-vswitchd and returns the golden-file text.
func recordAsync(t *testing.T, ofctl string) string {
	e := startOVSForeground(t)
	flows := e.path("flows.txt")
	if err := os.WriteFile(flows, []byte(strings.Join(asyncFlows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ofctl("-O", "OpenFlow15", "add-flows", "SOCK", flows)
	bf := e.path("bundle.txt")
	if err := os.WriteFile(bf, []byte(bundleFile), 0o644); err != nil {
		t.Fatal(err)
	}

	psock := e.path("proxy.sock")
	l, err := net.Listen("unix", psock)
	if err != nil {
		t.Fatal(err)
	}
	p := &asyncProxy{l: l, target: e.mgmt}
	p.wg.Add(1)
	go p.run()
	defer func() { l.Close(); p.wg.Wait() }()

	var sb strings.Builder
	write := func(name, what string, recs []captured) {
		fmt.Fprintf(&sb, "# %s: %s\n", name, what)
		for _, r := range recs {
			if isTableFeatures(r.data) {
				continue // ovs-ofctl's table-name lookups: megabytes, not ours
			}
			dir := "<"
			if r.sent {
				dir = ">"
			}
			fmt.Fprintf(&sb, "%s %s\n", dir, hex.EncodeToString(r.data))
		}
	}
	for _, s := range asyncSessions {
		args := make([]string, len(s.args))
		for i, a := range s.args {
			switch a {
			case "SOCK":
				a = "unix:" + psock
			case "BUNDLEFILE":
				a = bf
			}
			args[i] = a
		}
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		cmd := exec.CommandContext(ctx, ofctl, append([]string{"--timeout=6"}, args...)...)
		cmd.Env, cmd.Dir = e.env, e.dir
		if s.monitor {
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond) // let the monitor configure its connection
			s.trigger(e)
			time.Sleep(2500 * time.Millisecond) // hard timeouts are 1 s; expiry runs every second
			cmd.Process.Kill()
			cmd.Wait()
		} else if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ovs-ofctl %v: %v\n%s", s.args, err, out)
		}
		cancel()
		time.Sleep(100 * time.Millisecond) // let the proxy drain the closed connection
		write(s.name, "ovs-ofctl "+strings.Join(s.args, " "), p.take())
	}
	for _, d := range asyncDirectMsgs {
		write(d.name, "gvs client", recordDirect(t, e, d.v, d.msgs, d.trigger))
	}
	return sb.String()
}

func readAsyncCaptures(t testing.TB) []captured { return readCaptureFile(t, asyncCapturesFile) }

// TestRecordAsyncCaptures rewrites testdata/async_captures.txt with
// -update (run testdata/capture.sh); otherwise it does nothing, because
// the switch's messages carry durations and counters.
func TestRecordAsyncCaptures(t *testing.T) {
	if !*update {
		t.Skip("ofp: async captures are recorded only with -update")
	}
	got := recordAsync(t, needOVSOfctl(t))
	if err := os.WriteFile(asyncCapturesFile, []byte(got), 0o644); err != nil {
		t.Fatal(err)
	}
}
